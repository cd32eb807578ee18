// The evaluation journal (docs/JOURNAL.md, issue 13): a retry with the same journal calls
// the provider only for what did not settle, replays say so in the trace, a changed request
// diverges, and maxAgentCalls counts only real provider calls.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Loop, Parallel, createMemoryJournal, evaluate } from "@aml-jsx/sdk"

import { traceRecorder } from "./support/async.js"
import { Counter, scripted } from "./support/loop.js"
import { expectError, failureOf } from "./support/schemas.js"

/** A provider answering `<prompt>!` that fails once for every prompt listed in `failOnce`. */
function flaky(failOnce: string[] = []) {
  const calls: string[] = []
  const pending = new Set(failOnce)
  const provider = {
    name: "flaky",
    async run(request: any) {
      calls.push(request.prompt)
      if (pending.delete(request.prompt)) throw new Error(`outage while answering ${request.prompt}`)
      return { text: `${request.prompt}!` }
    },
  }
  return { calls, provider }
}

/** Six Agents in sequence, each prompt built from the previous answer. */
async function Chain() {
  let previous = "start"
  const parts: string[] = []
  for (let i = 1; i <= 6; i++) {
    previous = await evaluate(<Agent>{`step ${i} after ${previous.length}`}</Agent>)
    parts.push(previous)
  }
  return parts.join("|")
}

describe("resuming sequential Agents", () => {
  it("retries only the failed fifth Agent and the sixth, with the uninterrupted text", async () => {
    const clean = flaky()
    const expected = await new AmlRuntime({ agentProvider: clean.provider }).evaluate(<Chain />)
    expect(clean.calls).toHaveLength(6)

    const { calls, provider } = flaky([clean.calls[4]])
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const error = await failureOf(() => runtime.evaluate(<Chain />, { journal }))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(calls).toEqual(clean.calls.slice(0, 5))
    expect(journal.entries()).toHaveLength(4)

    calls.length = 0
    await expect(runtime.evaluate(<Chain />, { journal })).resolves.toBe(expected)
    expect(calls).toEqual([clean.calls[4], clean.calls[5]])
    // A third run replays everything.
    calls.length = 0
    await expect(runtime.evaluate(<Chain />, { journal })).resolves.toBe(expected)
    expect(calls).toEqual([])
  })

  it("resumes sibling Agents of the root task the same way", async () => {
    const tree = [1, 2, 3, 4, 5, 6].map((n) => <Agent>{`a${n}`}</Agent>)
    const { calls, provider } = flaky(["a5"])
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await failureOf(() => runtime.evaluate(tree, { journal }))
    calls.length = 0
    await expect(runtime.evaluate(tree, { journal })).resolves.toBe("a1!a2!a3!a4!a5!a6!")
    expect(calls).toEqual(["a5", "a6"])
  })
})

describe("editing the workflow between runs", () => {
  it("replays the existing steps when a step is appended", async () => {
    const { calls, provider } = flaky()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const steps = (n: number) => Array.from({ length: n }, (_, i) => <Agent>{`s${i + 1}`}</Agent>)
    await runtime.evaluate(steps(3), { journal })
    calls.length = 0
    await expect(runtime.evaluate(steps(4), { journal })).resolves.toBe("s1!s2!s3!s4!")
    expect(calls).toEqual(["s4"])
  })
})

describe("resuming Parallel and Loop", () => {
  it("retries only the two failed Parallel branches", async () => {
    const tree = (
      <Parallel>
        {["b1", "b2", "b3", "b4", "b5"].map((prompt) => (
          <Agent>{prompt}</Agent>
        ))}
      </Parallel>
    )
    const { calls, provider } = flaky(["b2", "b4"])
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const error = await failureOf(() => runtime.evaluate(tree, { journal }))
    expect(error).toBeInstanceOf(AggregateError)
    expect(journal.entries()).toHaveLength(3)
    calls.length = 0
    await expect(runtime.evaluate(tree, { journal })).resolves.toBe("b1!b2!b3!b4!b5!")
    expect(calls.sort()).toEqual(["b2", "b4"])
  })

  it("resumes a Loop that failed at iteration 3 at iteration 3, with the state it had", async () => {
    let failed = false
    const { provider, requests } = scripted(async ({ request, set }) => {
      const count = Number(/count=(\d+)/.exec(request.prompt)?.[1])
      if (count === 2 && !failed) {
        failed = true
        throw new Error("provider outage")
      }
      if (count < 4) await set({ count: count + 1 })
      return `n=${count}`
    })
    const loop = (
      <Loop initial={{ count: 0 }} name="counter" render={({ state }) => <Agent>{`count=${state.count}`}</Agent>} schema={Counter} />
    )
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await failureOf(() => runtime.evaluate(loop, { journal }))
    expect(requests.map((r) => r.prompt)).toEqual(["count=0", "count=1", "count=2"])
    requests.length = 0
    // A Loop renders its last iteration.
    await expect(runtime.evaluate(loop, { journal })).resolves.toBe("n=4")
    expect(requests.map((r) => r.prompt)).toEqual(["count=2", "count=3", "count=4"])
  })
})

describe("trace and divergence", () => {
  it("marks replayed Agents with a span attribute and a journal.replay event", async () => {
    const { provider } = flaky()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await runtime.evaluate(<Agent>hello</Agent>, { journal })
    const { events, sink } = traceRecorder()
    runtime.on("trace", sink)
    await expect(runtime.evaluate(<Agent>hello</Agent>, { journal })).resolves.toBe("hello!")
    const end = events.find((e) => e.type === "span.end" && e.kind === "agent")
    expect(end.attributes).toMatchObject({ "journal.replayed": true, provider: "flaky", turns: 1 })
    const replay = events.find((e) => e.type === "point" || e.name === "journal.replay")
    expect(replay).toMatchObject({ name: "journal.replay", spanId: end.spanId })
    expect(replay.attributes).toMatchObject({ kind: "agent", key: journal.entries()[0].key })
    // Span order is unchanged: the replayed Agent span opens and closes under the root.
    expect(events.filter((e) => e.type === "span.start").map((e) => e.kind)).toEqual(["evaluation", "agent"])
  })

  it("re-runs exactly the Agent whose prompt changed and reports the divergence", async () => {
    const tree = (second: string) => [<Agent>one</Agent>, <Agent>{second}</Agent>, <Agent>three</Agent>]
    const { calls, provider } = flaky()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await runtime.evaluate(tree("two"), { journal })
    calls.length = 0
    const { events, sink } = traceRecorder()
    runtime.on("trace", sink)
    await expect(runtime.evaluate(tree("TWO"), { journal })).resolves.toBe("one!TWO!three!")
    expect(calls).toEqual(["TWO"])
    const names = events.filter((e) => e.name?.startsWith("journal.")).map((e) => e.name)
    // The re-run Agent also names its step (journal.step, docs/JOURNAL.md) before diverging.
    expect(names).toEqual(["journal.replay", "journal.step", "journal.divergence", "journal.replay"])
    const agentEnds = events.filter((e) => e.type === "span.end" && e.kind === "agent")
    expect(agentEnds.map((e) => e.attributes["journal.replayed"] ?? false)).toEqual([true, false, true])
    // The divergent step was recorded anew: the next run replays it.
    calls.length = 0
    await runtime.evaluate(tree("TWO"), { journal })
    expect(calls).toEqual([])
  })

  it("an untraced replay still answers without the provider", async () => {
    const { calls, provider } = flaky()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await runtime.evaluate(<Agent>x</Agent>, { journal })
    calls.length = 0
    await expect(runtime.evaluate(<Agent>x</Agent>, { journal })).resolves.toBe("x!")
    expect(calls).toEqual([])
  })
})

describe("budgets", () => {
  it("counts only real provider calls against maxAgentCalls", async () => {
    const tree = [1, 2, 3, 4].map((n) => <Agent>{`c${n}`}</Agent>)
    const { calls, provider } = flaky()
    const journal = createMemoryJournal()
    const first = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 })
    const error = await failureOf(() => first.evaluate(tree, { journal }))
    expectError(error, EvaluationError, "AML evaluation exceeded maxAgentCalls 2 at Agent span-3")
    expect(calls).toEqual(["c1", "c2"])
    calls.length = 0
    // Two replays plus two real calls fit a budget of two.
    await expect(first.evaluate(tree, { journal })).resolves.toBe("c1!c2!c3!c4!")
    expect(calls).toEqual(["c3", "c4"])
  })

  it("keeps the engine's maxAgentCalls message and span when no journal is given", async () => {
    const tree = [1, 2, 3].map((n) => <Agent>{`c${n}`}</Agent>)
    const { provider } = flaky()
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 }).evaluate(tree))
    expectError(error, EvaluationError, "AML evaluation exceeded maxAgentCalls 2 at Agent span-3")
  })
})

describe("the journal option", () => {
  it("rejects a value that is not a journal", async () => {
    const runtime = new AmlRuntime({ agentProvider: flaky().provider })
    for (const journal of [1, "j", {}, { entries: () => [] }, { append() {}, entries: 1 }]) {
      const error = await failureOf(() => runtime.evaluate("x", { journal } as any))
      expectError(error, TypeError, "evaluate() journal must be an object with entries() and append() methods")
    }
    await expect(runtime.evaluate("x", { journal: null } as any)).resolves.toBe("x")
  })

  it("refuses malformed entries and non-iterable entries()", async () => {
    const runtime = new AmlRuntime({ agentProvider: flaky().provider })
    const bad = { append() {}, entries: () => [{ key: "k" }] }
    expectError(
      await failureOf(() => runtime.evaluate("x", { journal: bad })),
      TypeError,
      "AML journal entries must be { key, digest, kind, value } records",
    )
    const notIterable = { append() {}, entries: async () => 5 }
    expectError(
      await failureOf(() => runtime.evaluate("x", { journal: notIterable as any })),
      TypeError,
      "AML journal entries() must return an iterable",
    )
  })

  it("awaits an asynchronous journal (a database) before moving on", async () => {
    const stored: any[] = []
    const order: string[] = []
    const journal = {
      entries: async () => stored,
      async append(entry: any) {
        await new Promise((resolve) => setTimeout(resolve, 5))
        stored.push(entry)
        order.push(`stored ${entry.kind}`)
      },
    }
    const provider = {
      name: "p",
      async run(request: any) {
        order.push(`run ${request.prompt}`)
        return { text: request.prompt }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    await runtime.evaluate([<Agent>a</Agent>, <Agent>b</Agent>], { journal })
    expect(order).toEqual(["run a", "stored agent", "run b", "stored agent"])
    order.length = 0
    await expect(runtime.evaluate([<Agent>a</Agent>, <Agent>b</Agent>], { journal })).resolves.toBe("ab")
    expect(order).toEqual([])
  })
})
