// <Agent> plans (INVENTORY AG-1, AG-4, §2.3/§2.4): post-order plan assembly (prompt, follow-ups,
// system) and the frozen request and execution context a provider receives.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, System, evaluate } from "@aml-jsx/sdk"

import { recorder } from "./support/agent.js"
import { ONLY_ACTIVE } from "./support/errors.js"

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

  test("the context is a plain object, as a literal would make it, on both Agent paths", async () => {
    const { calls, provider } = recorder()
    const Fan = () => evaluate(<Agent>fanned</Agent>)
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <>
        <Agent>plain</Agent>
        <Fan />
      </>,
    )
    expect(calls.map((c) => c.request.prompt)).toEqual(["plain", "fanned"])
    for (const { context } of calls) {
      expect(Object.getPrototypeOf(context)).toBe(Object.prototype)
      expect(context.constructor).toBe(Object)
      expect(Reflect.ownKeys(context)).toEqual(["events", "signal", "trace"])
      for (const key of ["events", "signal", "trace"]) {
        expect(Object.getOwnPropertyDescriptor(context, key)).toMatchObject({ configurable: false, enumerable: true, writable: false })
      }
    }
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
