// <System> and <FollowUp> (INVENTORY AG-2, AG-3, §2.3 system span): placement, content
// channels, trimming, ordering, and the errors each rule raises.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Fragment, Sandbox, System, evaluate } from "@aml-jsx/sdk"

type Call = { request: any }

function recorder(name = "p", respond: (request: any) => unknown = (r) => ({ text: `[${name}:${r.prompt}]` })) {
  const calls: Call[] = []
  const provider = {
    name,
    async run(request: any) {
      calls.push({ request })
      return respond(request)
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
  expect(error.message).toBe(message)
  return error
}

function Pass(props: { children?: unknown }) {
  return props.children as any
}

async function AsyncPass(props: { children?: unknown }) {
  await new Promise((resolve) => setTimeout(resolve, 1))
  return props.children as any
}

const runtimeWith = (provider: any, options: Record<string, unknown> = {}) =>
  new AmlRuntime({ agentProvider: provider, ...options } as any)

describe("<System> placement (AG-2)", () => {
  const ONLY = "<System> is only valid inside <Agent>"

  test("at the root, inside a component or a Fragment outside any Agent", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    await expectEvaluationError(runtime.evaluate(<System>x</System>), ONLY)
    await expectEvaluationError(
      runtime.evaluate(
        <Pass>
          <System>x</System>
        </Pass>,
      ),
      ONLY,
    )
    await expectEvaluationError(
      runtime.evaluate(
        <>
          text <System>x</System>
        </>,
      ),
      ONLY,
    )
    expect(calls).toEqual([])
  })

  test("inside a <FollowUp> (whose target is text) it is not inside an Agent plan", async () => {
    const { calls, provider } = recorder()
    await expectEvaluationError(
      runtimeWith(provider).evaluate(
        <Agent>
          p
          <FollowUp>
            <System>x</System>
          </FollowUp>
        </Agent>,
      ),
      ONLY,
    )
    expect(calls).toEqual([])
  })

  test("a component-local evaluate() of a <System> does not inherit the calling Agent", async () => {
    const { provider } = recorder()
    async function Inner() {
      return await evaluate(<System>x</System>)
    }
    await expectEvaluationError(
      runtimeWith(provider).evaluate(
        <Agent>
          <Inner />
        </Agent>,
      ),
      ONLY,
    )
  })

  test("nested <System> descriptors are invalid, directly or through components", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          <System>
            outer <System>inner</System>
          </System>
        </Agent>,
      ),
      "nested <System> descriptors are invalid",
    )
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          <System>
            <AsyncPass>
              <System>inner</System>
            </AsyncPass>
          </System>
        </Agent>,
      ),
      "nested <System> descriptors are invalid",
    )
    expect(calls).toEqual([])
  })

  test("the placement error is raised before the System's children run", async () => {
    const child = vi.fn(() => "x")
    const Child = child as any
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <System>
          <Child />
        </System>,
      ),
      "<System> is only valid inside <Agent>",
    )
    expect(child).not.toHaveBeenCalled()
  })
})

describe("<System> content", () => {
  const EMPTY = "<System> must resolve to non-empty text"

  test("must resolve to non-empty text after trim", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    for (const system of [
      <System />,
      <System> </System>,
      <System>{"\n\t \uFEFF\u3000"}</System>,
      <System>
        {null}
        {false}
        {[]}
      </System>,
      <System>
        <Pass>{"  "}</Pass>
      </System>,
    ]) {
      await expectEvaluationError(runtime.evaluate(<Agent>p{system}</Agent>), EMPTY)
    }
    expect(calls).toEqual([])
  })

  test("System text goes to the system channel, never to the prompt; fragments keep authored order", async () => {
    const { calls, provider } = recorder()
    function Policy() {
      return <System>from component</System>
    }
    await runtimeWith(provider).evaluate(
      <Agent>
        <System>one</System>
        start
        <Policy />
        <>
          <System>
            {"frag"}
            {3}
          </System>
        </>
        end
        {[<System key="a">array-a</System>, <System key="b">array-b</System>]}
        <AsyncPass>
          <System>async</System>
        </AsyncPass>
      </Agent>,
    )
    expect(calls[0].request.prompt).toBe("startend")
    expect(calls[0].request.system).toBe("one\nfrom component\nfrag3\narray-a\narray-b\nasync")
  })

  test("interior whitespace of a fragment is kept; only the fragment is trimmed", async () => {
    const { calls, provider } = recorder()
    await runtimeWith(provider).evaluate(
      <Agent>
        <System>{"  line one\n\n  line two  "}</System>x
      </Agent>,
    )
    expect(calls[0].request.system).toBe("line one\n\n  line two")
  })

  test("a child <Agent> inside <System> runs first and its text becomes system text", async () => {
    const log: string[] = []
    const inner = recorder("inner", (r) => {
      log.push(`inner:${r.prompt}`)
      return { text: ` policy from ${r.prompt} ` }
    })
    const outer = recorder("outer", (r) => {
      log.push(`outer:${r.prompt}`)
      return { text: "done" }
    })
    const result = await new AmlRuntime({ system: "runtime" }).evaluate(
      <Agent provider={outer.provider}>
        <System>
          Use: <Agent provider={inner.provider}>writer</Agent>
        </System>
        task
      </Agent>,
    )
    expect(result).toBe("done")
    expect(log).toEqual(["inner:writer", "outer:task"])
    expect(outer.calls[0].request.system).toBe("runtime\nUse:  policy from writer")
    // The inner Agent's own plan gets the runtime system only: System fragments are per Agent.
    expect(inner.calls[0].request.system).toBe("runtime")
    // Its enclosing span is the System span (trace-1) under the outer Agent (span-1).
    expect(inner.calls[0].request.trace).toMatchObject({ parentSpanId: "trace-1", spanId: "span-2" })
  })

  test("an Agent inside <System> may have its own <System>; each belongs to its nearest Agent", async () => {
    const inner = recorder("inner", () => ({ text: "generated" }))
    const outer = recorder("outer")
    await runtimeWith(outer.provider).evaluate(
      <Agent>
        <System>
          <Agent provider={inner.provider}>
            <System>inner only</System>
            make policy
          </Agent>
        </System>
        <Agent provider={inner.provider}>
          <System>child only</System>c
        </Agent>
        p
      </Agent>,
    )
    expect(inner.calls.map((c) => c.request.system)).toEqual(["inner only", "child only"])
    expect(outer.calls[0].request.system).toBe("generated")
    expect(outer.calls[0].request.prompt).toBe("generatedp")
  })

  test("<FollowUp> directly inside <System> is only valid inside <Agent>", async () => {
    const { provider } = recorder()
    await expectEvaluationError(
      runtimeWith(provider).evaluate(
        <Agent>
          <System>
            <FollowUp>x</FollowUp>
          </System>
        </Agent>,
      ),
      "<FollowUp> is only valid inside <Agent>",
    )
  })
})

describe("the system span", () => {
  function traced(runtime: AmlRuntime, captureContent: boolean) {
    const events: any[] = []
    const sink: any = (event: any) => {
      events.push(event)
    }
    sink.captureContent = captureContent
    runtime.on("trace", sink)
    return events
  }

  test("kind system, name System, trace-N under the Agent span, index among System fragments", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider, { system: "runtime" })
    const plain = traced(runtime, false)
    const content = traced(runtime, true)
    await runtime.evaluate(
      <Agent system="fixed">
        <System> first </System>
        prompt
        <System>second</System>
      </Agent>,
    )
    const starts = plain.filter((e) => e.type === "span.start" && e.kind === "system")
    expect(starts.map((e) => [e.spanId, e.parentSpanId, e.name, { ...e.attributes }])).toEqual([
      ["trace-1", "span-1", "System", { index: 1 }],
      ["trace-2", "span-1", "System", { index: 2 }],
    ])
    const ends = plain.filter((e) => e.type === "span.end" && e.kind === "system")
    expect(ends.map((e) => [e.spanId, e.status, { ...e.attributes }])).toEqual([
      ["trace-1", "ok", {}],
      ["trace-2", "ok", {}],
    ])
    const contentEnds = content.filter((e) => e.type === "span.end" && e.kind === "system")
    expect(contentEnds.map((e) => ({ ...e.attributes }))).toEqual([{ content: "first" }, { content: "second" }])
    // The System span closes before the Agent span, which closes last among them.
    const order = plain
      .filter((e) => e.type === "span.end")
      .map((e) => e.spanId)
      .filter((id) => id !== "trace-0")
    expect(order).toEqual(["trace-1", "trace-2", "span-1"])
  })

  test("the index counts per Agent, and a System inside a component is parented to that component", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider)
    const events = traced(runtime, false)
    function Policy() {
      return <System>p</System>
    }
    await runtime.evaluate(
      <Agent>
        <System>a</System>
        <Agent>
          <System>child</System>x
        </Agent>
        <Policy />
      </Agent>,
    )
    const starts = events.filter((e) => e.type === "span.start" && e.kind === "system")
    expect(starts.map((e) => [e.parentSpanId, e.attributes.index])).toEqual([
      ["span-1", 1],
      ["span-2", 1],
      ["trace-3", 2],
    ])
  })

  test("an empty System closes its span with status error", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider)
    const events = traced(runtime, true)
    await rejection(runtime.evaluate(<Agent>{<System> </System>}</Agent>))
    const end = events.find((e) => e.type === "span.end" && e.kind === "system")
    expect(end.status).toBe("error")
    expect(end.attributes["error.message"]).toBe("<System> must resolve to non-empty text")
    const agentEnd = events.find((e) => e.type === "span.end" && e.kind === "agent")
    expect(agentEnd.status).toBe("error")
  })
})

describe("<FollowUp> placement (AG-3)", () => {
  test("outside an Agent: <FollowUp> is only valid inside <Agent>", async () => {
    const runtime = new AmlRuntime()
    await expectEvaluationError(runtime.evaluate(<FollowUp>x</FollowUp>), "<FollowUp> is only valid inside <Agent>")
    await expectEvaluationError(
      runtime.evaluate(
        <Pass>
          <FollowUp>x</FollowUp>
        </Pass>,
      ),
      "<FollowUp> is only valid inside <Agent>",
    )
  })

  test("nested <FollowUp> descriptors are invalid, directly or through a component", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          p
          <FollowUp>
            a<FollowUp>b</FollowUp>
          </FollowUp>
        </Agent>,
      ),
      "nested <FollowUp> descriptors are invalid",
    )
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          p
          <FollowUp>
            <Pass>
              <FollowUp>b</FollowUp>
            </Pass>
          </FollowUp>
        </Agent>,
      ),
      "nested <FollowUp> descriptors are invalid",
    )
    expect(calls).toEqual([])
  })

  test("a component-local evaluate() of a <FollowUp> does not inherit the calling Agent", async () => {
    const { provider } = recorder()
    async function Inner() {
      return await evaluate(<FollowUp>x</FollowUp>)
    }
    await expectEvaluationError(
      runtimeWith(provider).evaluate(
        <Agent>
          p<Inner />
        </Agent>,
      ),
      "<FollowUp> is only valid inside <Agent>",
    )
  })

  test("components are not lexical wrappers: a FollowUp returned through components is immediate", async () => {
    const { calls, provider } = recorder()
    await runtimeWith(provider).evaluate(
      <Agent>
        p
        <Pass>
          <AsyncPass>
            <FollowUp>deep</FollowUp>
          </AsyncPass>
        </Pass>
      </Agent>,
    )
    expect(calls[0].request.followUps).toEqual(["deep"])
  })

  // A <Sandbox> scope frame is a lexical wrapper between the Agent and the FollowUp.
  test("under <Sandbox> inside an Agent: not an immediate message descriptor", async () => {
    const { provider } = recorder()
    const followUp = vi.fn(() => "x")
    const Content = followUp as any
    const released: string[] = []
    const sandbox = { name: "s", acquire: async (request: any) => ({
      handle: null,
      id: "s-1",
      release: async () => void released.push("s-1"),
      runtime: { access: request.access, cwd: request.cwd, root: request.root, exec: async () => ({}), spawn: async () => ({}) },
    }) }
    const error = await rejection(
      runtimeWith(provider).evaluate(
        <Agent>
          p
          <Sandbox provider={sandbox as any}>
            <FollowUp>
              <Content />
            </FollowUp>
          </Sandbox>
        </Agent>,
      ),
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("<FollowUp> must be an immediate message descriptor of <Agent>")
    expect(followUp).not.toHaveBeenCalled()
    expect(released).toEqual(["s-1"])
  })
})

describe("<FollowUp> content", () => {
  test("must resolve to non-empty text", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    for (const followUp of [
      <FollowUp />,
      <FollowUp> </FollowUp>,
      <FollowUp>{"\n\uFEFF"}</FollowUp>,
      <FollowUp>{[null, false, ""]}</FollowUp>,
    ]) {
      await expectEvaluationError(runtime.evaluate(<Agent>p{followUp}</Agent>), "<FollowUp> must resolve to non-empty text")
    }
    expect(calls).toEqual([])
  })

  test("non-whitespace Agent text cannot follow <FollowUp>; whitespace is ignored", async () => {
    const { calls, provider } = recorder()
    const runtime = runtimeWith(provider)
    const after = "non-whitespace Agent text cannot follow <FollowUp>"
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>c
        </Agent>,
      ),
      after,
    )
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>
          {0}
        </Agent>,
      ),
      after,
    )
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>
          <Pass>{"  late  "}</Pass>
        </Agent>,
      ),
      after,
    )
    // A child Agent's result is Agent text too.
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>
          <Agent>child</Agent>
        </Agent>,
      ),
      after,
    )
    expect(calls.map((c) => c.request.prompt)).toEqual(["child"])
    calls.length = 0
    const ok = await runtime.evaluate(
      <Agent>
        {"  a  "}
        <FollowUp>b</FollowUp>
        {"  \n\t "}
        {null}
        {false}
        <FollowUp>c</FollowUp>
        {"\u3000"}
      </Agent>,
    )
    expect(ok).toBe("[p:a]")
    expect(calls[0].request.followUps).toEqual(["b", "c"])
  })

  test("a <System> after a <FollowUp> still goes to the system channel", async () => {
    const { calls, provider } = recorder()
    await runtimeWith(provider).evaluate(
      <Agent>
        a<FollowUp>b</FollowUp>
        <System>late system</System>
      </Agent>,
    )
    expect(calls[0].request).toMatchObject({ followUps: ["b"], prompt: "a", system: "late system" })
  })

  test("a child Agent inside a FollowUp contributes to that FollowUp's text", async () => {
    const inner = recorder("inner")
    const outer = recorder("outer")
    await runtimeWith(outer.provider).evaluate(
      <Agent>
        p
        <FollowUp>
          Refine with: <Agent provider={inner.provider}>advice</Agent>
        </FollowUp>
      </Agent>,
    )
    expect(inner.calls[0].request.prompt).toBe("advice")
    expect(outer.calls[0].request.followUps).toEqual(["Refine with: [inner:advice]"])
    expect(outer.calls[0].request.prompt).toBe("p")
  })

  test("FollowUps belong to their nearest Agent only", async () => {
    const inner = recorder("inner")
    const outer = recorder("outer")
    await runtimeWith(outer.provider).evaluate(
      <Agent>
        p
        <Agent provider={inner.provider}>
          i<FollowUp>inner turn</FollowUp>
        </Agent>
        <FollowUp>outer turn</FollowUp>
      </Agent>,
    )
    expect(inner.calls[0].request.followUps).toEqual(["inner turn"])
    expect(outer.calls[0].request.followUps).toEqual(["outer turn"])
    expect(outer.calls[0].request.prompt).toBe("p[inner:i]")
  })

  test("components and Fragments may return flat FollowUp lists", async () => {
    const { calls, provider } = recorder()
    function Passes() {
      return [<FollowUp key="1">one</FollowUp>, <FollowUp key="2">two</FollowUp>]
    }
    async function MorePasses() {
      await Promise.resolve()
      return (
        <>
          <FollowUp>three</FollowUp>
          <Fragment>
            <FollowUp>four</FollowUp>
          </Fragment>
        </>
      )
    }
    await runtimeWith(provider).evaluate(
      <Agent>
        Draft.
        <Passes />
        <MorePasses />
        {[[<FollowUp key="5">five</FollowUp>]]}
      </Agent>,
    )
    expect(calls[0].request.prompt).toBe("Draft.")
    expect(calls[0].request.followUps).toEqual(["one", "two", "three", "four", "five"])
  })

  test("a FollowUp opens no span of its own", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider)
    const events: any[] = []
    runtime.on("trace", (event: any) => {
      events.push(event)
    })
    await runtime.evaluate(
      <Agent>
        p<FollowUp>f</FollowUp>
      </Agent>,
    )
    expect(events.filter((e) => e.type === "span.start").map((e) => e.spanId)).toEqual(["trace-0", "span-1"])
    const end = events.find((e) => e.type === "span.end" && e.spanId === "span-1")
    expect(end.attributes.turns).toBe(2)
  })
})
