// <FollowUp> (INVENTORY AG-3): placement, content channel, trimming, ordering, and the errors each
// rule raises.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Fragment, Sandbox, System, evaluate } from "@aml-jsx/sdk"

import { AsyncPass, expectEvaluationError, Pass, recorder, runtimeWith } from "./support/descriptors.js"
import { rejection } from "./support/errors.js"

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
