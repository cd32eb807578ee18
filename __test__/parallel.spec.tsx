// <Parallel> (INVENTORY PAR-1, docs-next "Explicit concurrency"): authored order, real
// concurrency, joining before the parent continues, the scheduler bound, nesting, use in
// an Agent prompt, trace shape, props and placement. Failures and cancellation are in
// parallel-failure.spec.tsx.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Parallel, System, Tool, defineTool } from "@aml-jsx/sdk"

import { delay, echoProvider, traceRecorder } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

/** A provider that answers `[prompt]` after the delay named in the prompt ("slow", "fast"…). */
function timedProvider(delays: Record<string, number>) {
  const finished: string[] = []
  const state = { active: 0, max: 0 }
  const provider = {
    name: "p",
    async run(request: any) {
      state.active++
      state.max = Math.max(state.max, state.active)
      await delay(delays[request.prompt] ?? 0)
      state.active--
      finished.push(request.prompt)
      return { text: `[${request.prompt}]` }
    },
  }
  return { finished, provider, state }
}

describe("order and concurrency", () => {
  it("keeps authored branch order when the second branch finishes first", async () => {
    const { finished, provider } = timedProvider({ fast: 5, slow: 60 })
    const tree = (
      <Parallel>
        <Agent>slow</Agent>
        <Agent>fast</Agent>
      </Parallel>
    )
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(tree)).resolves.toBe("[slow][fast]")
    expect(finished).toEqual(["fast", "slow"])
  })

  it("runs branches concurrently, while plain siblings run one after the other", async () => {
    // Measured by overlap, not wall time: both Parallel calls are inside run() at once.
    const parallelRun = timedProvider({ a: 20, b: 20 })
    const parallel = await new AmlRuntime({ agentProvider: parallelRun.provider }).evaluate(
      <Parallel>
        <Agent>a</Agent>
        <Agent>b</Agent>
      </Parallel>,
    )
    const sequentialRun = timedProvider({ a: 20, b: 20 })
    const sequential = await new AmlRuntime({ agentProvider: sequentialRun.provider }).evaluate([
      <Agent>a</Agent>,
      <Agent>b</Agent>,
    ])
    expect(parallel).toBe("[a][b]")
    expect(sequential).toBe("[a][b]")
    expect(parallelRun.state.max).toBe(2)
    expect(sequentialRun.state.max).toBe(1)
  })

  it("each top-level child is one branch; an array child is one sequential branch", async () => {
    const log: string[] = []
    const step = (name: string, ms: number) =>
      async function Step() {
        log.push(`${name}+`)
        await delay(ms)
        log.push(`${name}-`)
        return name
      }
    const [A, B, C] = [step("A", 20), step("B", 20), step("C", 5)]
    const { events, sink } = traceRecorder()
    const tree = (
      <Parallel>
        {[<A />, <B />]}
        <C />
      </Parallel>
    )
    await expect(new AmlRuntime({ trace: sink }).evaluate(tree)).resolves.toBe("ABC")
    // A and C start together; B starts only after A finished.
    expect(log).toEqual(["A+", "C+", "C-", "A-", "B+", "B-"])
    const end = events.find((event) => event.type === "span.end" && event.kind === "parallel")
    expect(end.attributes).toEqual({ branches: 2 })
  })

  it("waits for every branch before the parent continues", async () => {
    const log: string[] = []
    async function Branch(props: { name: string; ms: number }) {
      await delay(props.ms)
      log.push(props.name)
      return props.name
    }
    function After() {
      log.push("after")
      return "!"
    }
    const tree = [
      <Parallel>
        <Branch name="slow" ms={40} />
        <Branch name="fast" ms={1} />
      </Parallel>,
      <After />,
    ]
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("slowfast!")
    expect(log).toEqual(["fast", "slow", "after"])
  })

  it("maxConcurrentAgents still bounds the provider calls of the branches", async () => {
    const { provider, state } = timedProvider({ a: 20, b: 20, c: 20, d: 20 })
    const tree = (
      <Parallel>
        <Agent>a</Agent>
        <Agent>b</Agent>
        <Agent>c</Agent>
        <Agent>d</Agent>
      </Parallel>
    )
    const runtime = new AmlRuntime({ agentProvider: provider, maxConcurrentAgents: 2 })
    await expect(runtime.evaluate(tree)).resolves.toBe("[a][b][c][d]")
    expect(state.max).toBe(2)
  })

  it("nests: inner branches run concurrently with the outer ones", async () => {
    const { provider, state } = timedProvider({ a: 30, b: 30, c: 30 })
    const tree = (
      <Parallel>
        <Parallel>
          <Agent>a</Agent>
          <Agent>b</Agent>
        </Parallel>
        <Agent>c</Agent>
      </Parallel>
    )
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(tree)).resolves.toBe("[a][b][c]")
    expect(state.max).toBe(3)
  })

  it("works inside an Agent prompt: branch Agents run concurrently, their text joins the prompt", async () => {
    const { provider, state } = timedProvider({ one: 30, two: 5 })
    const tree = (
      <Agent>
        Compare:{" "}
        <Parallel>
          <Agent>one</Agent>
          <Agent>two</Agent>
        </Parallel>{" "}
        done
      </Agent>
    )
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(tree)).resolves.toBe("[Compare: [one][two] done]")
    expect(state.max).toBe(2)
  })

  it("an empty Parallel yields an empty string", async () => {
    const { events, sink } = traceRecorder()
    const runtime = new AmlRuntime({ trace: sink })
    for (const tree of [<Parallel />, <Parallel>{null}</Parallel>, <Parallel>{[]}</Parallel>, <Parallel>{false}</Parallel>]) {
      await expect(runtime.evaluate(["<", tree, ">"])).resolves.toBe("<>")
    }
    const ends = events.filter((event) => event.type === "span.end" && event.kind === "parallel")
    expect(ends.map((event) => event.attributes)).toEqual(Array(4).fill({ branches: 0 }))
  })

  it("counts one depth level, like any node; branches continue from there", async () => {
    const Leaf = () => "x"
    const tree = (
      <Parallel>
        <Leaf />
      </Parallel>
    )
    await expect(new AmlRuntime({ maxDepth: 2 }).evaluate(tree)).resolves.toBe("x")
    const error = await failureOf(() => new AmlRuntime({ maxDepth: 1 }).evaluate(tree))
    expectError(error, EvaluationError, "AML evaluation exceeded maxDepth 1")
  })
})

describe("trace", () => {
  it("opens a `parallel` span named Parallel; branch spans are its children", async () => {
    const { events, sink } = traceRecorder()
    const { provider } = echoProvider("p", 5)
    const Branch = () => "text"
    function Outer() {
      return (
        <Parallel>
          <Branch />
          <Agent>prompt</Agent>
        </Parallel>
      )
    }
    await expect(new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate(<Outer />)).resolves.toBe("textprompt")
    const start = (name: string) => events.find((event) => event.type === "span.start" && event.name === name)
    const parallel = start("Parallel")
    expect(parallel.kind).toBe("parallel")
    expect(parallel.parentSpanId).toBe(start("Outer").spanId)
    expect(parallel.attributes).toEqual({})
    expect(start("Branch").parentSpanId).toBe(parallel.spanId)
    expect(start("Agent").parentSpanId).toBe(parallel.spanId)
    const end = events.find((event) => event.type === "span.end" && event.spanId === parallel.spanId)
    expect(end).toMatchObject({ attributes: { branches: 2 }, kind: "parallel", name: "Parallel", status: "ok" })
    // The Parallel span closes after both branch spans.
    const endIndex = events.indexOf(end)
    for (const name of ["Branch", "Agent"]) {
      const branchEnd = events.findIndex((event) => event.type === "span.end" && event.name === name)
      expect(branchEnd).toBeLessThan(endIndex)
    }
  })
})

describe("props and placement", () => {
  it("rejects props other than children, before evaluating any branch", async () => {
    let called = false
    const Branch = () => {
      called = true
      return "x"
    }
    const props: any = { x: 1 }
    const error = await failureOf(() =>
      new AmlRuntime().evaluate(
        <Parallel {...props}>
          <Branch />
        </Parallel>,
      ),
    )
    expectError(error, EvaluationError, "<Parallel> does not accept a x prop")
    expect(called).toBe(false)
  })

  it("capabilities directly in a branch do not reach an enclosing Agent", async () => {
    const tool = defineTool({ description: "d", execute: async () => 1, input: z.object({}), name: "t" })
    const { provider } = echoProvider("p")
    const runtime = new AmlRuntime({ agentProvider: provider })
    const cases: [any, string][] = [
      [<System>s</System>, "<System> is only valid inside <Agent>"],
      [<Tool use={tool} />, "<Tool> is only valid inside <Agent>"],
      [<FollowUp>f</FollowUp>, "<FollowUp> is only valid inside <Agent>"],
    ]
    for (const [capability, message] of cases) {
      const tree = (
        <Agent>
          <Parallel>
            {capability}
            text
          </Parallel>
        </Agent>
      )
      expectError(await failureOf(() => runtime.evaluate(tree)), EvaluationError, message)
    }
  })

  it("an Agent inside a branch owns the capabilities written inside it", async () => {
    const tool = defineTool({ description: "d", execute: async () => 1, input: z.object({}), name: "t" })
    const { provider, requests } = echoProvider("p")
    const tree = (
      <Agent>
        outer{" "}
        <Parallel>
          <Agent>
            <System>s</System>
            <Tool use={tool} />
            inner
            <FollowUp>f</FollowUp>
          </Agent>
        </Parallel>
      </Agent>
    )
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(tree)).resolves.toBe("outer inner")
    const [inner, outer] = requests
    expect([inner.system, inner.tools.length, inner.followUps]).toEqual(["s", 1, ["f"]])
    expect([outer.system, outer.tools.length, "followUps" in outer]).toEqual(["", 0, false])
  })
})
