// <System> (INVENTORY AG-2): placement, content channel, trimming, ordering, and the errors each
// rule raises.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, FollowUp, System, evaluate } from "@aml-jsx/sdk"

import { AsyncPass, expectEvaluationError, Pass, recorder, runtimeWith } from "./support/descriptors.js"

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
