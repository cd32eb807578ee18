// A recording-only journaled evaluation (docs/JOURNAL.md, "Cost"): a built-in memory journal
// with no entries cannot replay anything, so its one-call Agents take the plain path and
// the engine records them as they land (src/hot_path/recorded_steps.rs). What it records,
// in which order, and what listeners see must be what the journaled path gives any other
// journal object for the same run.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, createMemoryJournal, evaluate } from "@aml-jsx/sdk"

import { traceRecorder } from "./support/async.js"
import { expectError } from "./support/schemas.js"

function counting(usageFor?: string) {
  const calls: string[] = []
  const provider = {
    name: "p",
    async run(request: any) {
      calls.push(request.prompt)
      const response: any = { text: `<${request.prompt}>` }
      if (request.prompt === usageFor) response.usage = { inputTokens: 7, outputTokens: 2 }
      return response
    },
  }
  return { calls, provider }
}

/** A journal object of the application's own: recorded on the facade's journaled path. */
function plainJournal() {
  const list: any[] = []
  return { list, journal: { entries: () => list, append: (entry: any) => void list.push(entry) } }
}

/** A node only the generic driver takes (see journal-lean.spec.tsx): the journaled path. */
function foreignAgent(prompt: string) {
  const node = { props: Object.freeze({ children: prompt }), type: Agent }
  Object.defineProperty(node, "$$typeof", { value: Symbol.for("@aml-jsx/sdk/node") })
  return Object.freeze(node)
}

/** One-call Agents, with every third one through the driver, interleaved. */
function Mixed({ n }: { n: number }) {
  return Promise.all(
    Array.from({ length: n }, (_, i) => evaluate(i % 3 === 1 ? (foreignAgent(`task ${i}`) as any) : <Agent>{`task ${i}`}</Agent>)),
  ).then((parts) => parts.join(","))
}

/** Entries as plain data, by key (settle order is the path's own timing; checked apart). */
const byKey = (entries: readonly any[]) =>
  entries.map((entry) => JSON.parse(JSON.stringify(entry))).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))

function comparable(events: any[]) {
  return events.map((event) => {
    const { at, timestamp, durationMs, ...rest } = event
    return { ...rest, runId: undefined }
  })
}

describe("a recording-only journal (an empty memory journal)", () => {
  it("records what any journal object records, in settle order, and a retry replays all of it", async () => {
    const own = counting("task 4")
    const ownRuntime = new AmlRuntime({ agentProvider: own.provider })
    const reference = plainJournal()
    const expected = await ownRuntime.evaluate(<Mixed n={9} />, { journal: reference.journal })

    const { calls, provider } = counting("task 4")
    const runtime = new AmlRuntime({ agentProvider: provider })
    const trace = traceRecorder()
    const off = runtime.on("trace", trace.sink)
    const journal = createMemoryJournal()
    await expect(runtime.evaluate(<Mixed n={9} />, { journal })).resolves.toBe(expected)
    off()
    expect(calls).toHaveLength(9)
    // Same keys, digests and values (the usage one included)...
    expect(byKey(journal.entries())).toEqual(byKey(reference.list))
    // ...in the order the Agents settled: their spans' ends, named by their journal.step keys.
    const keyOf = new Map(trace.events.filter((event) => event.name === "journal.step").map((event) => [event.spanId, event.attributes.key]))
    const settled = trace.events.filter((event) => event.type === "span.end" && event.kind === "agent").map((event) => keyOf.get(event.spanId))
    expect(journal.entries().map((entry) => entry.key)).toEqual(settled)
    expect(journal.entries().find((entry) => entry.key === reference.list[4].key)?.value.usage).toEqual({ inputTokens: 7, outputTokens: 2 })
    // The next evaluation replays every step, natively or through the facade.
    await expect(runtime.evaluate(<Mixed n={9} />, { journal })).resolves.toBe(expected)
    expect(calls).toHaveLength(9)
    expect(journal.entries()).toHaveLength(9)
  })

  it("shows listeners the journaled path's spans and journal.step points", async () => {
    const reference = plainJournal()
    const referenceTrace = traceRecorder()
    const first = new AmlRuntime({ agentProvider: counting().provider })
    first.on("trace", referenceTrace.sink)
    await first.evaluate(<Mixed n={4} />, { journal: reference.journal })

    const trace = traceRecorder()
    const runtime = new AmlRuntime({ agentProvider: counting().provider })
    runtime.on("trace", trace.sink)
    await runtime.evaluate(<Mixed n={4} />, { journal: createMemoryJournal() })
    expect(comparable(trace.events)).toEqual(comparable(referenceTrace.events))
    expect(trace.events.filter((event) => event.name === "journal.step").map((event) => event.attributes.key)).toEqual(
      reference.list.map((entry) => entry.key),
    )
  })

  it("keeps an application's own appends in order with the engine's records", async () => {
    const { provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const mine = Object.freeze({ key: "mine", digest: "d", kind: "tool" as const, value: Object.freeze({ output: 1 }) })
    async function Steps() {
      await evaluate(<Agent>a</Agent>)
      journal.append(mine)
      await evaluate(<Agent>b</Agent>)
      return JSON.stringify(journal.entries().map((entry) => entry.key))
    }
    const keys = JSON.parse(await runtime.evaluate(<Steps />, { journal }))
    expect(keys).toHaveLength(3)
    expect(keys[1]).toBe("mine")
    expect(journal.entries().map((entry) => entry.key)).toEqual(keys)
  })

  it("keeps recording when another evaluation starts on the same journal meanwhile", async () => {
    // Not supported (docs/JOURNAL.md: one run at a time), but nothing is lost or fails: the
    // second finds an entry (not recording-only) while the first still records natively.
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const provider = {
      name: "p",
      async run(request: any) {
        // The first evaluation records one answer, then waits with the other in flight.
        if (request.prompt === "slow 2") await gate
        return { text: `<${request.prompt}>` }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    function Two({ tag }: { tag: string }) {
      return Promise.all([evaluate(<Agent>{`${tag} 1`}</Agent>), evaluate(<Agent>{`${tag} 2`}</Agent>)]).then((parts) => parts.join(","))
    }
    const first = runtime.evaluate(<Two tag="slow" />, { journal })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const second = runtime.evaluate(<Two tag="fast" />, { journal })
    await expect(second).resolves.toBe("<fast 1>,<fast 2>")
    release()
    await expect(first).resolves.toBe("<slow 1>,<slow 2>")
    expect(journal.entries().map((entry) => entry.value.text).sort()).toEqual(["<fast 1>", "<fast 2>", "<slow 1>", "<slow 2>"])
  })

  it("counts real calls against maxAgentCalls with the documented message", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 })
    const journal = createMemoryJournal()
    async function Three() {
      await evaluate(<Agent>a</Agent>)
      await evaluate(<Agent>b</Agent>)
      return evaluate(<Agent>c</Agent>)
    }
    // The message an unjournaled run gives at the same Agent.
    const unjournaled = await new AmlRuntime({ agentProvider: counting().provider, maxAgentCalls: 2 }).evaluate(<Three />).catch((caught) => caught)
    expect(unjournaled.message).toMatch(/^AML evaluation exceeded maxAgentCalls 2 at Agent span-\d+$/)
    const error = await runtime.evaluate(<Three />, { journal }).catch((caught) => caught)
    expectError(error, EvaluationError, unjournaled.message)
    expect(calls).toEqual(["a", "b"])
    expect(journal.entries().map((entry) => entry.value.text)).toEqual(["<a>", "<b>"])
    // Resumed: the two recorded steps replay for free, the third runs.
    await expect(runtime.evaluate(<Three />, { journal })).resolves.toBe("<c>")
    expect(calls).toEqual(["a", "b", "c"])
  })
})
