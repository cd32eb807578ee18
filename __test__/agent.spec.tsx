// <Agent> (INVENTORY AG-1, AG-4, §2.3/§2.4): props, provider selection, post-order plan
// assembly, the frozen request and execution context, limits, response validation, provider
// failures and the Agent span.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, System, evaluate } from "@aml-jsx/sdk"

const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

type Call = { request: any; context: any; self: unknown }

/** An inline provider that records every call and answers `respond(request)`. */
function recorder(name = "p", respond: (request: any, context: any) => unknown = (r) => ({ text: `[${name}:${r.prompt}]` })) {
  const calls: Call[] = []
  const provider = {
    name,
    async run(this: unknown, request: any, context: any) {
      calls.push({ context, request, self: this })
      return respond(request, context)
    },
  }
  return { calls, provider }
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error("expected the evaluation to reject")
    },
    (error: unknown) => error,
  )
}

async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.name).toBe("EvaluationError")
  expect(error.message).toBe(message)
  return error
}

async function expectTypeError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(TypeError)
  expect(error).not.toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(message)
  return error
}

function traced(runtime: AmlRuntime, captureContent: boolean) {
  const events: any[] = []
  const sink: any = (event: any) => {
    events.push(event)
  }
  sink.captureContent = captureContent
  runtime.on("trace", sink)
  return events
}

describe("AG-1 prop errors, raised when the node is entered and before its children", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["model number", { model: 42 }, "<Agent> model must be a string"],
    ["model object", { model: { id: "m" } }, "<Agent> model must be a string"],
    ["system number", { system: 1 }, "<Agent> system must be a string"],
    ["system array", { system: ["a"] }, "<Agent> system must be a string"],
    ["permissions string", { permissions: "read-only" }, "<Agent> permissions must be an object"],
    ["permissions number", { permissions: 7 }, "<Agent> permissions must be an object"],
    ["permissions boolean", { permissions: true }, "<Agent> permissions must be an object"],
    [
      "permissions.filesystem",
      { permissions: { filesystem: "write" } },
      '<Agent> permissions.filesystem must be "read-only" or "read-write"',
    ],
    [
      "permissions.filesystem boolean",
      { permissions: { filesystem: true } },
      '<Agent> permissions.filesystem must be "read-only" or "read-write"',
    ],
    ["permissions.network", { permissions: { network: "yes" } }, "<Agent> permissions.network must be a boolean"],
    ["permissions.shell", { permissions: { shell: 1 } }, "<Agent> permissions.shell must be a boolean"],
    ["cwd without Sandbox", { cwd: "src" }, "<Agent> cwd requires an enclosing <Sandbox>"],
  ]

  for (const [label, props, message] of cases) {
    test(`${label}: ${message}`, async () => {
      const { calls, provider } = recorder()
      const child = vi.fn(() => "child text")
      const Child = child as any
      const AgentAny = Agent as any
      await expectEvaluationError(
        new AmlRuntime({ agentProvider: provider }).evaluate(
          <AgentAny {...props}>
            <Child />
          </AgentAny>,
        ),
        message,
      )
      expect(child).not.toHaveBeenCalled()
      expect(calls).toEqual([])
    })
  }

  test("model and system errors are checked before permissions", async () => {
    const AgentAny = Agent as any
    await expectEvaluationError(
      new AmlRuntime().evaluate(<AgentAny model={1} permissions="x" />),
      "<Agent> model must be a string",
    )
    await expectEvaluationError(
      new AmlRuntime().evaluate(<AgentAny system={1} permissions="x" />),
      "<Agent> system must be a string",
    )
  })
})

describe("provider selection and PA-2 validation of the provider prop", () => {
  const invalid: [string, unknown, string][] = [
    ["a number", 5, "Agent provider must be an object"],
    ["a string", "p", "Agent provider must be an object"],
    ["no name", { run() {} }, "Agent provider name must be a non-empty string"],
    ["an empty name", { name: "", run() {} }, "Agent provider name must be a non-empty string"],
    ["a non-string name", { name: 3, run() {} }, "Agent provider name must be a non-empty string"],
    ["an unnormalized name", { name: " p ", run() {} }, "Agent provider name must already be normalized"],
    ["no run", { name: "p" }, "Agent provider run must be a function"],
    ["a non-function run", { name: "p", run: "go" }, "Agent provider run must be a function"],
    [
      "a non-function supportsSandbox",
      { name: "p", run() {}, supportsSandbox: true },
      "Agent provider supportsSandbox must be a function when provided",
    ],
  ]

  for (const [label, provider, message] of invalid) {
    test(`a provider prop with ${label} rejects with TypeError "${message}" before children`, async () => {
      const child = vi.fn(() => "x")
      const Child = child as any
      const AgentAny = Agent as any
      await expectTypeError(
        new AmlRuntime().evaluate(
          <AgentAny provider={provider}>
            <Child />
          </AgentAny>,
        ),
        message,
      )
      expect(child).not.toHaveBeenCalled()
    })
  }

  test("the prop provider wins over the runtime default, for that Agent only", async () => {
    const runtimeDefault = recorder("default")
    const prop = recorder("prop")
    const result = await new AmlRuntime({ agentProvider: runtimeDefault.provider }).evaluate(
      <Agent provider={prop.provider}>
        outer <Agent>inner</Agent>
      </Agent>,
    )
    expect(result).toBe("[prop:outer [default:inner]]")
    expect(runtimeDefault.calls.map((c) => c.request.prompt)).toEqual(["inner"])
    expect(prop.calls.map((c) => c.request.prompt)).toEqual(["outer [default:inner]"])
  })

  test("run is called with the provider object as this, and its members are read once", async () => {
    let nameReads = 0
    let runReads = 0
    const calls: unknown[] = []
    const provider = {
      get name() {
        nameReads++
        return "counted"
      },
      get run() {
        runReads++
        return async function (this: unknown) {
          calls.push(this)
          return { text: "ok" }
        }
      },
    }
    expect(await new AmlRuntime().evaluate(<Agent provider={provider as any}>x</Agent>)).toBe("ok")
    expect(calls).toEqual([provider])
    expect(nameReads).toBe(1)
    expect(runReads).toBe(1)
  })

  test("the provider prop is read with component evaluation masked", async () => {
    const seen: unknown[] = []
    const provider = {
      get name() {
        try {
          evaluate("x")
          seen.push("evaluate() was available")
        } catch (error) {
          seen.push(error)
        }
        return "masked"
      },
      async run() {
        return { text: "done" }
      },
    }
    async function Caller() {
      return await evaluate(<Agent provider={provider}>x</Agent>)
    }
    expect(await new AmlRuntime().evaluate(<Caller />)).toBe("done")
    expect(seen).toHaveLength(1)
    expect(seen[0]).toBeInstanceOf(EvaluationError)
    expect((seen[0] as Error).message).toBe(ONLY_ACTIVE)
  })

  test("`Agent span-1 has no provider` is raised after the children resolved", async () => {
    const child = vi.fn(() => "child ran")
    const Child = child as any
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <Agent>
          <Child />
        </Agent>,
      ),
      "Agent span-1 has no provider",
    )
    expect(child).toHaveBeenCalledTimes(1)
  })

  test("a child Agent with its own provider runs before the parent fails for lack of one", async () => {
    const inner = recorder("inner")
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <Agent>
          <Agent provider={inner.provider}>child</Agent>
        </Agent>,
      ),
      "Agent span-1 has no provider",
    )
    expect(inner.calls).toHaveLength(1)
    expect(inner.calls[0].request.trace.spanId).toBe("span-2")
  })

  test("the no-provider error names the Agent's own span", async () => {
    const { provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <>
          <Agent provider={provider}>first</Agent>
          <Agent>second</Agent>
        </>,
      ),
      "Agent span-2 has no provider",
    )
  })
})

describe("plan assembly", () => {
  test("the prompt is the concatenated text, trimmed once at the session boundary", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        {"  \n\t leading"}
        {1}
        {null}
        {false}
        {undefined}
        {["a", ["b"]]}
        {"trailing  \n "}
      </Agent>,
    )
    expect(calls[0].request.prompt).toBe("leading1abtrailing")
  })

  test("prompt trimming follows String.prototype.trim, not Rust's trim", async () => {
    const { calls, provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    await runtime.evaluate(<Agent>{"\uFEFF\u3000 bom and ideographic space \u2028\uFEFF"}</Agent>)
    await runtime.evaluate(<Agent>{"\u0085next line is not JS whitespace\u0085"}</Agent>)
    expect(calls.map((c) => c.request.prompt)).toEqual([
      "bom and ideographic space",
      "\u0085next line is not JS whitespace\u0085",
    ])
  })

  test("an Agent with no children gets an empty prompt", async () => {
    const { calls, provider } = recorder()
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent />)).toBe("[p:]")
    expect(calls[0].request.prompt).toBe("")
  })

  test("follow-ups are each trimmed and keep authored order", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        prompt
        <FollowUp>{"  one \n"}</FollowUp>
        <FollowUp>
          {"\t"}
          two{" "}
        </FollowUp>
        <FollowUp>{"\uFEFFthree\u3000"}</FollowUp>
      </Agent>,
    )
    expect(calls[0].request.followUps).toEqual(["one", "two", "three"])
  })

  test("system = [runtime system, props.system] trimmed and non-empty, then <System> fragments, joined with \\n", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider, system: "  runtime policy \n" }).evaluate(
      <Agent system={"\t fixed "}>
        <System> first </System>
        prompt
        <System>{"second\n"}</System>
      </Agent>,
    )
    expect(calls[0].request.system).toBe("runtime policy\nfixed\nfirst\nsecond")
  })

  test("empty fixed fragments are dropped", async () => {
    const { calls, provider } = recorder()
    const blank = new AmlRuntime({ agentProvider: provider, system: " \n " })
    await blank.evaluate(
      <Agent system="   ">
        <System>only</System>
      </Agent>,
    )
    await blank.evaluate(<Agent system="">x</Agent>)
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)
    await new AmlRuntime({ agentProvider: provider, system: "runtime" }).evaluate(<Agent>x</Agent>)
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent system="props">x</Agent>)
    expect(calls.map((c) => c.request.system)).toEqual(["only", "", "", "runtime", "props"])
  })

  test("a child Agent's result lands at its authored position in the parent prompt", async () => {
    const parent = recorder("parent", () => ({ text: "parent done" }))
    const child = recorder("child", (r) => ({ text: `<${r.prompt.toUpperCase()}>` }))
    const result = await new AmlRuntime({ agentProvider: child.provider }).evaluate(
      <>
        before-root|
        <Agent provider={parent.provider}>
          Findings: <Agent>first</Agent> and <Agent>second</Agent>; done.
        </Agent>
        |after-root
      </>,
    )
    expect(result).toBe("before-root|parent done|after-root")
    expect(parent.calls[0].request.prompt).toBe("Findings: <FIRST> and <SECOND>; done.")
    expect(child.calls.map((c) => c.request.prompt)).toEqual(["first", "second"])
  })

  test("children resolve in post-order: child sessions finish before the parent's provider is called", async () => {
    const log: string[] = []
    const provider = {
      name: "p",
      async run(request: any) {
        log.push(`start ${request.trace.spanId}`)
        await new Promise((resolve) => setTimeout(resolve, 5))
        log.push(`end ${request.trace.spanId}`)
        return { text: request.trace.spanId }
      },
    }
    const result = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Agent>
          <Agent>deep</Agent>
        </Agent>
        <Agent>sibling</Agent>
      </Agent>,
    )
    expect(result).toBe("span-1")
    expect(log).toEqual(["start span-3", "end span-3", "start span-2", "end span-2", "start span-4", "end span-4", "start span-1", "end span-1"])
  })
})

describe("permissions", () => {
  const DEFAULTS = { filesystem: "read-write", network: true, shell: true }

  test("defaults to read-write filesystem, network and shell, frozen", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)
    const permissions = calls[0].request.permissions
    expect(permissions).toEqual(DEFAULTS)
    expect(Object.keys(permissions).sort()).toEqual(["filesystem", "network", "shell"])
    expect(Object.isFrozen(permissions)).toBe(true)
  })

  test("overrides apply over the defaults and the result is frozen and detached from the prop", async () => {
    const { calls, provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const overrides: any = { filesystem: "read-only" }
    await runtime.evaluate(<Agent permissions={overrides}>a</Agent>)
    await runtime.evaluate(<Agent permissions={{ network: false }}>b</Agent>)
    await runtime.evaluate(<Agent permissions={{ filesystem: "read-write", network: false, shell: false }}>c</Agent>)
    await runtime.evaluate(<Agent permissions={{}}>d</Agent>)
    await runtime.evaluate(<Agent permissions={{ network: undefined } as any}>e</Agent>)
    expect(calls.map((c) => c.request.permissions)).toEqual([
      { filesystem: "read-only", network: true, shell: true },
      { filesystem: "read-write", network: false, shell: true },
      { filesystem: "read-write", network: false, shell: false },
      DEFAULTS,
      DEFAULTS,
    ])
    for (const call of calls) expect(Object.isFrozen(call.request.permissions)).toBe(true)
    expect(calls[0].request.permissions).not.toBe(overrides)
    expect(Object.isFrozen(overrides)).toBe(false)
  })

  test("each permission member is read once", async () => {
    const { calls, provider } = recorder()
    let reads = 0
    const permissions = {
      get filesystem() {
        reads++
        return reads === 1 ? "read-only" : "not valid"
      },
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent permissions={permissions as any}>x</Agent>)
    expect(reads).toBe(1)
    expect(calls[0].request.permissions.filesystem).toBe("read-only")
  })
})

describe("AG-4 request and execution context", () => {
  test("the request has exactly the documented keys and is deeply frozen", async () => {
    const { calls, provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const starts: any[] = []
    runtime.on("start", (event: any) => {
      starts.push(event)
    })
    await runtime.evaluate(<Agent>hello</Agent>)
    const request = calls[0].request
    expect(Object.keys(request).sort()).toEqual(["mcpServers", "permissions", "prompt", "system", "tools", "trace"])
    expect("followUps" in request).toBe(false)
    expect("model" in request).toBe(false)
    expect("output" in request).toBe(false)
    expect(request.mcpServers).toEqual([])
    expect(request.tools).toEqual([])
    expect(request.prompt).toBe("hello")
    expect(request.system).toBe("")
    expect(request.trace).toEqual({ parentSpanId: "trace-0", runId: starts[0].runId, spanId: "span-1" })
    expect(Object.keys(request.trace).sort()).toEqual(["parentSpanId", "runId", "spanId"])
    for (const value of [request, request.mcpServers, request.tools, request.permissions, request.trace]) {
      expect(Object.isFrozen(value)).toBe(true)
    }
    expect(() => {
      "use strict"
      request.prompt = "changed"
    }).toThrow(TypeError)
  })

  test("model appears only when given; followUps only when there are some, frozen", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent model="gpt-x">
        hi
        <FollowUp>more</FollowUp>
      </Agent>,
    )
    const request = calls[0].request
    expect(Object.keys(request).sort()).toEqual([
      "followUps",
      "mcpServers",
      "model",
      "permissions",
      "prompt",
      "system",
      "tools",
      "trace",
    ])
    expect(request.model).toBe("gpt-x")
    expect(request.followUps).toEqual(["more"])
    expect(Object.isFrozen(request.followUps)).toBe(true)
  })

  test("an empty-string model is still passed through", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent model="">x</Agent>)
    expect(calls[0].request.model).toBe("")
  })

  test("trace identities: span-N in pre-order, parent is the enclosing span", async () => {
    const { calls, provider } = recorder()
    function Wrapper() {
      return <Agent>in component</Agent>
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        outer
        <Agent>child</Agent>
        <Wrapper />
      </Agent>,
    )
    const byPrompt = Object.fromEntries(calls.map((c) => [c.request.prompt.split(/[^a-z]/)[0], c.request.trace]))
    expect(byPrompt.child).toMatchObject({ parentSpanId: "span-1", spanId: "span-2" })
    // Wrapper's component span is the first trace-N span of the run.
    expect(byPrompt.in).toMatchObject({ parentSpanId: "trace-1", spanId: "span-3" })
    expect(byPrompt.outer).toMatchObject({ parentSpanId: "trace-0", spanId: "span-1" })
    const runIds = new Set(calls.map((c) => c.request.trace.runId))
    expect(runIds.size).toBe(1)
    expect([...runIds][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  test("the context is frozen with events, signal and trace", async () => {
    const { calls, provider } = recorder()
    const controller = new AbortController()
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>, { signal: controller.signal })
    const { context, request } = calls[0]
    expect(Object.keys(context).sort()).toEqual(["events", "signal", "trace"])
    expect(Object.isFrozen(context)).toBe(true)
    expect(context.signal).toBe(controller.signal)
    expect(context.trace).toEqual(request.trace)
    expect(Object.isFrozen(context.trace)).toBe(true)
    expect(typeof context.events.on).toBe("function")
    expect(typeof context.events.once).toBe("function")
  })

  test("without a caller signal the context still carries an AbortSignal", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)
    expect(calls[0].context.signal).toBeInstanceOf(AbortSignal)
    expect(calls[0].context.signal.aborted).toBe(false)
  })

  test("context.events subscribes to this evaluation's finish event only", async () => {
    const seen: any[] = []
    const provider = {
      name: "p",
      async run(_request: any, context: any) {
        context.events.on("finish", (event: any) => {
          seen.push(event)
        })
        return { text: "ok" }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const starts: any[] = []
    runtime.on("start", (event: any) => {
      starts.push(event)
    })
    await runtime.evaluate(<Agent>x</Agent>)
    await runtime.evaluate("no agent")
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ runId: starts[0].runId, status: "ok" })
  })

  test("provider run() is masked: a re-entrant evaluate() throws synchronously, before and after awaits", async () => {
    const seen: unknown[] = []
    const attempt = () => {
      try {
        evaluate("re-entrant")
        seen.push("available")
      } catch (error) {
        seen.push(error)
      }
    }
    const provider = {
      name: "p",
      async run() {
        attempt()
        await new Promise((resolve) => setTimeout(resolve, 1))
        attempt()
        return { text: "ok" }
      },
    }
    async function Caller() {
      return await evaluate(<Agent provider={provider}>x</Agent>)
    }
    expect(await new AmlRuntime().evaluate(<Caller />)).toBe("ok")
    expect(seen).toHaveLength(2)
    for (const error of seen) {
      expect(error).toBeInstanceOf(EvaluationError)
      expect((error as Error).message).toBe(ONLY_ACTIVE)
    }
  })
})

describe("limits", () => {
  test("maxTurnsPerAgent counts the initial prompt plus each FollowUp, checked after children", async () => {
    const { calls, provider } = recorder()
    const child = vi.fn(() => "c")
    const Child = child as any
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 2 }).evaluate(
        <Agent>
          <Child />
          <FollowUp>one</FollowUp>
          <FollowUp>two</FollowUp>
        </Agent>,
      ),
      "Agent span-1 exceeded maxTurnsPerAgent 2",
    )
    expect(child).toHaveBeenCalledTimes(1)
    expect(calls).toEqual([])
    const ok = await new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 3 }).evaluate(
      <Agent>
        p<FollowUp>one</FollowUp>
        <FollowUp>two</FollowUp>
      </Agent>,
    )
    expect(ok).toBe("[p:p]")
  })

  test("maxTurnsPerAgent 1 allows a plain Agent and rejects any FollowUp", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 1 })
    expect(await runtime.evaluate(<Agent>solo</Agent>)).toBe("[p:solo]")
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>
        </Agent>,
      ),
      "Agent span-1 exceeded maxTurnsPerAgent 1",
    )
  })

  test("maxTurnsPerAgent 0 is unlimited; the default is 16 turns", async () => {
    const { calls, provider } = recorder()
    const many = (n: number) => Array.from({ length: n }, (_, i) => <FollowUp>{`f${i}`}</FollowUp>)
    await new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 0 }).evaluate(<Agent>x{many(40)}</Agent>)
    expect(calls[0].request.followUps).toHaveLength(40)
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x{many(15)}</Agent>)
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x{many(16)}</Agent>),
      "Agent span-1 exceeded maxTurnsPerAgent 16",
    )
  })

  test("maxAgentCalls rejects the first Agent over budget, naming its span", async () => {
    const { calls, provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
        <>
          <Agent>first</Agent>
          <Agent>second</Agent>
        </>,
      ),
      "AML evaluation exceeded maxAgentCalls 1 at Agent span-2",
    )
    expect(calls.map((c) => c.request.prompt)).toEqual(["first"])
  })

  test("maxAgentCalls is reserved in completion order: a parent over budget after its child", async () => {
    const { calls, provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
        <Agent>
          parent <Agent>child</Agent>
        </Agent>,
      ),
      "AML evaluation exceeded maxAgentCalls 1 at Agent span-1",
    )
    expect(calls.map((c) => c.request.trace.spanId)).toEqual(["span-2"])
  })

  test("a multi-turn Agent counts once", async () => {
    const { calls, provider } = recorder()
    const result = await new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
      <Agent>
        a<FollowUp>b</FollowUp>
        <FollowUp>c</FollowUp>
        <FollowUp>d</FollowUp>
      </Agent>,
    )
    expect(result).toBe("[p:a]")
    expect(calls).toHaveLength(1)
  })

  test("maxAgentCalls counts across component-local evaluations of one domain, not across domains", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 })
    async function Two() {
      const [a, b] = await Promise.all([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])
      return a + b
    }
    expect(await runtime.evaluate(<Two />)).toBe("[p:a][p:b]")
    expect(await runtime.evaluate(<Two />)).toBe("[p:a][p:b]")
    await expectEvaluationError(
      runtime.evaluate(
        <>
          <Two />
          <Agent>third</Agent>
        </>,
      ),
      "AML evaluation exceeded maxAgentCalls 2 at Agent span-3",
    )
  })

  test("maxAgentCalls 0 is unlimited; the default is 32", async () => {
    const { calls, provider } = recorder("p", () => ({ text: "." }))
    const agents = (n: number) => Array.from({ length: n }, (_, i) => <Agent>{`a${i}`}</Agent>)
    expect(await new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0 }).evaluate(agents(40))).toBe(".".repeat(40))
    expect(calls).toHaveLength(40)
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(agents(32))).toBe(".".repeat(32))
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(agents(33)),
      "AML evaluation exceeded maxAgentCalls 32 at Agent span-33",
    )
  })

  test("an Agent rejected for missing provider does not consume a call", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ maxAgentCalls: 1 })
    async function Tolerant() {
      const failed = await evaluate(<Agent>no provider</Agent>).catch((error: Error) => error.message)
      const ok = await evaluate(<Agent provider={provider}>with provider</Agent>)
      return `${failed}|${ok}`
    }
    expect(await runtime.evaluate(<Tolerant />)).toBe("Agent span-1 has no provider|[p:with provider]")
  })
})

describe("response validation", () => {
  const invalid: [string, unknown][] = [
    ["text 42", { text: 42 }],
    ["no text", {}],
    ["null", null],
    ["undefined", undefined],
    ["a string", "text"],
    ["text undefined", { text: undefined }],
    ["a String object", { text: new String("boxed") }],
  ]
  for (const [label, response] of invalid) {
    test(`${label} → Agent "p" (span-1) returned an invalid response`, async () => {
      const provider = { name: "p", run: async () => response }
      const error = await expectEvaluationError(
        new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
        'Agent "p" (span-1) returned an invalid response',
      )
      expect(error.cause).toBeUndefined()
    })
  }

  test("a throwing text getter becomes the cause; text is read exactly once", async () => {
    const boom = new Error("getter exploded")
    let reads = 0
    const provider = {
      name: "p",
      run: async () => ({
        get text() {
          reads++
          throw boom
        },
      }),
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) returned an invalid response',
    )
    expect(error.cause).toBe(boom)
    expect(reads).toBe(1)

    let okReads = 0
    const once = {
      name: "q",
      run: async () => ({
        get text() {
          okReads++
          return okReads === 1 ? "first read" : "second read"
        },
      }),
    }
    expect(await new AmlRuntime({ agentProvider: once }).evaluate(<Agent>x</Agent>)).toBe("first read")
    expect(okReads).toBe(1)
  })

  test("the response getter runs with component evaluation masked", async () => {
    const seen: unknown[] = []
    const provider = {
      name: "p",
      run: async () => ({
        get text() {
          try {
            evaluate("x")
            seen.push("available")
          } catch (error) {
            seen.push(error)
          }
          return "ok"
        },
      }),
    }
    async function Caller() {
      return await evaluate(<Agent provider={provider}>x</Agent>)
    }
    expect(await new AmlRuntime().evaluate(<Caller />)).toBe("ok")
    expect(seen[0]).toBeInstanceOf(EvaluationError)
    expect((seen[0] as Error).message).toBe(ONLY_ACTIVE)
  })

  test("an empty text is a valid response and contributes nothing", async () => {
    const provider = { name: "p", run: async () => ({ text: "" }) }
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<>a<Agent>x</Agent>b</>)).toBe("ab")
  })

  test("extra response members (structured) are ignored in text mode", async () => {
    const provider = { name: "p", run: async () => ({ structured: { a: 1 }, text: "t" }) }
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)).toBe("t")
  })

  test("the provider may return a thenable", async () => {
    const provider = {
      name: "p",
      run: () => ({ then: (resolve: (value: unknown) => void) => resolve({ text: "from thenable" }) }),
    }
    expect(await new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>)).toBe("from thenable")
  })
})

describe("provider failures", () => {
  test('a rejection wraps as Agent "p" (span-1) failed with the provider error as cause', async () => {
    const boom = new Error("provider exploded")
    const provider = {
      name: "p",
      async run() {
        throw boom
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(boom)
  })

  test("a synchronous throw and a non-Error rejection are wrapped the same way", async () => {
    const thrown = { code: 42 }
    const sync = {
      name: "sync",
      run() {
        throw thrown
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: sync as any }).evaluate(
        <>
          <Agent provider={{ name: "ok", run: async () => ({ text: "" }) }}>first</Agent>
          <Agent>x</Agent>
        </>,
      ),
      'Agent "sync" (span-2) failed',
    )
    expect(error.cause).toBe(thrown)
    const stringy = { name: "s", run: () => Promise.reject("just a string") }
    const second = await expectEvaluationError(
      new AmlRuntime({ agentProvider: stringy as any }).evaluate(<Agent>x</Agent>),
      'Agent "s" (span-1) failed',
    )
    expect(second.cause).toBe("just a string")
  })

  test("an EvaluationError thrown by the provider is still wrapped", async () => {
    const inner = new EvaluationError("inner")
    const provider = {
      name: "p",
      async run() {
        throw inner
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(inner)
  })

  test("the provider rejecting with the caller's abort reason is rethrown unwrapped", async () => {
    const controller = new AbortController()
    const reason = new Error("caller stopped")
    const provider = {
      name: "p",
      run(_request: any, context: any) {
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason))
          setTimeout(() => controller.abort(reason), 1)
        })
      },
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>, { signal: controller.signal }),
    )
    expect(error).toBe(reason)
  })

  test("a provider that ignores the signal still rejects the evaluation with the reason", async () => {
    const controller = new AbortController()
    const reason = { not: "an error" }
    let called = 0
    const provider = {
      name: "p",
      run() {
        called++
        setTimeout(() => controller.abort(reason), 1)
        return new Promise(() => {})
      },
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>, { signal: controller.signal }),
    )
    expect(error).toBe(reason)
    expect(called).toBe(1)
  })

  test("an abort while the Agent's children are resolving rejects with the reason; the provider is never called", async () => {
    const { calls, provider } = recorder()
    const controller = new AbortController()
    const reason = new Error("early stop")
    async function Slow() {
      setTimeout(() => controller.abort(reason), 1)
      await new Promise((resolve) => setTimeout(resolve, 20))
      return "late child"
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider }).evaluate(
        <Agent>
          <Slow />
        </Agent>,
        { signal: controller.signal },
      ),
    )
    expect(error).toBe(reason)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(calls).toEqual([])
  })

  test("a provider's own AbortError (not the caller's reason) is wrapped", async () => {
    const own = new DOMException("provider timeout", "AbortError")
    const provider = { name: "p", run: () => Promise.reject(own) }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(own)
  })
})

describe("the Agent span", () => {
  function agentEnds(events: any[]) {
    return events.filter((e) => e.type === "span.end" && e.kind === "agent" && e.name === "Agent")
  }

  test("end attributes: provider, tools, mcpServers, turns, model; no content for a metadata listener", async () => {
    const { provider } = recorder("prov", () => ({ text: "answer" }))
    const runtime = new AmlRuntime({ agentProvider: provider, system: "sys" })
    const events = traced(runtime, false)
    await runtime.evaluate(
      <Agent model="m1">
        ask
        <FollowUp>again</FollowUp>
      </Agent>,
    )
    const start = events.find((e) => e.type === "span.start" && e.kind === "agent")
    expect(start).toMatchObject({ name: "Agent", parentSpanId: "trace-0", spanId: "span-1" })
    expect({ ...start.attributes }).toEqual({})
    const [end] = agentEnds(events)
    expect(end).toMatchObject({ parentSpanId: "trace-0", spanId: "span-1", status: "ok" })
    expect({ ...end.attributes }).toEqual({ mcpServers: 0, model: "m1", provider: "prov", tools: 0, turns: 2 })
    expect(Object.getPrototypeOf(end.attributes)).toBe(null)
    expect(Object.isFrozen(end.attributes)).toBe(true)
  })

  test("model is omitted without the prop; prompt, system and output only for captureContent listeners", async () => {
    const { provider } = recorder("prov", () => ({ text: "the answer" }))
    const runtime = new AmlRuntime({ agentProvider: provider, system: "runtime" })
    const plain = traced(runtime, false)
    const content = traced(runtime, true)
    await runtime.evaluate(
      <Agent system="fixed">
        <System>frag</System> question{" "}
      </Agent>,
    )
    expect({ ...agentEnds(plain)[0].attributes }).toEqual({ mcpServers: 0, provider: "prov", tools: 0, turns: 1 })
    expect({ ...agentEnds(content)[0].attributes }).toEqual({
      mcpServers: 0,
      output: "the answer",
      prompt: "question",
      provider: "prov",
      system: "runtime\nfixed\nfrag",
      tools: 0,
      turns: 1,
    })
  })

  test("a failing provider closes the Agent span with status error", async () => {
    const provider = {
      name: "p",
      async run() {
        throw new TypeError("nope")
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, true)
    await rejection(runtime.evaluate(<Agent>x</Agent>))
    const end = events.find((e) => e.type === "span.end" && e.spanId === "span-1")
    expect(end.status).toBe("error")
    expect(end.attributes["error.type"]).toBe("EvaluationError")
    expect(end.attributes["error.message"]).toBe('Agent "p" (span-1) failed')
  })

  test("nested Agent spans are parented to the enclosing Agent span", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    await runtime.evaluate(
      <Agent>
        <Agent>inner</Agent>
      </Agent>,
    )
    const starts = events.filter((e) => e.type === "span.start" && e.kind === "agent")
    expect(starts.map((e) => [e.spanId, e.parentSpanId])).toEqual([
      ["span-1", "trace-0"],
      ["span-2", "span-1"],
    ])
    const ends = agentEnds(events)
    expect(ends.map((e) => e.spanId)).toEqual(["span-2", "span-1"])
  })

  test("span ids do not depend on whether tracing is enabled", async () => {
    const untraced = recorder()
    const tracedRec = recorder()
    function C() {
      return <Agent>c</Agent>
    }
    const tree = (
      <Agent>
        <C />
        <Agent>d</Agent>
      </Agent>
    )
    await new AmlRuntime({ agentProvider: untraced.provider }).evaluate(tree)
    const runtime = new AmlRuntime({ agentProvider: tracedRec.provider })
    traced(runtime, false)
    await runtime.evaluate(tree)
    const ids = (calls: Call[]) => calls.map((c) => [c.request.trace.spanId, c.request.trace.parentSpanId])
    expect(ids(untraced.calls)).toEqual([
      ["span-2", "trace-1"],
      ["span-3", "span-1"],
      ["span-1", "trace-0"],
    ])
    expect(ids(tracedRec.calls)).toEqual(ids(untraced.calls))
  })
})
