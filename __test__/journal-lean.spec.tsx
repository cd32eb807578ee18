// The journal's one-call paths (docs/JOURNAL.md, "Replay and divergence"): a replayed
// `evaluate(<Agent>prompt</Agent>)` is created, replayed and released in one engine call
// and settles with no bookkeeping of its own (the lean replay); a recorded one lands in its
// provider's reaction. Both must be indistinguishable from the driver's path for the same
// steps: same keys, results, spans, attributes and journal events.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, createMemoryJournal, evaluate } from "@aml-jsx/sdk"

import { traceRecorder } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

function counting() {
  const calls: string[] = []
  const provider = {
    name: "p",
    async run(request: any) {
      calls.push(request.prompt)
      return { text: `<${request.prompt}>` }
    },
  }
  return { calls, provider }
}

/**
 * A node the driver accepts but the one-call path does not take (it is not this copy's
 * node, as one built by another physical copy of the package would be): the same step
 * through the generic driver (driver.js, runAgent), at the same position.
 */
function foreignAgent(prompt: string) {
  const node = { props: Object.freeze({ children: prompt }), type: Agent }
  Object.defineProperty(node, "$$typeof", { value: Symbol.for("@aml-jsx/sdk/node") })
  return Object.freeze(node)
}

function Fan({ n, foreign = false }: { n: number; foreign?: boolean }) {
  return Promise.all(
    Array.from({ length: n }, (_, i) => evaluate(foreign ? (foreignAgent(`task ${i}`) as any) : <Agent>{`task ${i}`}</Agent>)),
  ).then((parts) => parts.join(","))
}

/** Trace events without their timing members, in order. */
function comparable(events: any[]) {
  return events.map((event) => {
    const { at, startTime, endTime, time, duration, durationMs, timestamp, ...rest } = event
    const attributes = rest.attributes === undefined ? undefined : { ...rest.attributes }
    if (attributes !== undefined) for (const name of ["durationMs", "duration"]) delete attributes[name]
    return { ...rest, attributes, runId: undefined }
  })
}

describe("the lean replay of evaluate(<Agent>prompt</Agent>)", () => {
  it("gives the driver's replay results, keys, spans and journal events", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const recorded = await runtime.evaluate(<Fan n={6} />, { journal })
    expect(calls).toHaveLength(6)
    // Recorded on the one-call path; replayed on the driver's, then on the one-call path.
    const driver = traceRecorder()
    const offDriver = runtime.on("trace", driver.sink)
    await expect(runtime.evaluate(<Fan n={6} foreign />, { journal })).resolves.toBe(recorded)
    offDriver()
    const lean = traceRecorder()
    runtime.on("trace", lean.sink)
    await expect(runtime.evaluate(<Fan n={6} />, { journal })).resolves.toBe(recorded)
    expect(calls).toHaveLength(6)
    // Each replayed Agent opens, answers and closes before the next one starts on both.
    expect(comparable(lean.events)).toEqual(comparable(driver.events))
    const ends = lean.events.filter((e) => e.type === "span.end" && e.kind === "agent")
    expect(ends.map((e) => e.attributes["journal.replayed"])).toEqual(Array(6).fill(true))
    expect(lean.events.filter((e) => e.name === "journal.replay")).toHaveLength(6)
  })

  it("replays untraced with the same text and order, and a listener added later sees later replays", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    async function Steps() {
      const first = await evaluate(<Agent>a</Agent>)
      // Not awaited: a replayed Agent has already settled, nothing is left to join.
      const second = evaluate(<Agent>b</Agent>)
      const third = evaluate(<Agent>c</Agent>)
      return [first, await second, await third].join("")
    }
    await expect(runtime.evaluate(<Steps />, { journal })).resolves.toBe("<a><b><c>")
    await expect(runtime.evaluate(<Steps />, { journal })).resolves.toBe("<a><b><c>")
    expect(calls).toEqual(["a", "b", "c"])
    const trace = traceRecorder()
    runtime.on("trace", trace.sink)
    await expect(runtime.evaluate(<Steps />, { journal })).resolves.toBe("<a><b><c>")
    const keys = trace.events.filter((e) => e.name === "journal.replay").map((e) => e.attributes.key)
    expect(keys).toEqual(["agent:c.e0/A.", "agent:c.e1/A.", "agent:c.e2/A."])
  })

  it("returns a promise that is already settled: a replayed step never reaches the component's join", async () => {
    const { provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const seen: string[] = []
    function Dropped() {
      // The promise is dropped: the join still waits for a live one, a replayed one is done.
      evaluate(<Agent>x</Agent>).then((text) => seen.push(text))
      return "done"
    }
    await expect(runtime.evaluate(<Dropped />, { journal })).resolves.toBe("done")
    expect(seen).toEqual(["<x>"])
    seen.length = 0
    await expect(runtime.evaluate(<Dropped />, { journal })).resolves.toBe("done")
    expect(seen).toEqual(["<x>"])
  })

  it("still re-runs and reports a changed prompt, and stops at the engine's errors", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider, maxDepth: 3 })
    const journal = createMemoryJournal()
    function One({ prompt }: { prompt: string }) {
      return evaluate(<Agent>{prompt}</Agent>)
    }
    await runtime.evaluate(<One prompt="a" />, { journal })
    const trace = traceRecorder()
    const off = runtime.on("trace", trace.sink)
    await expect(runtime.evaluate(<One prompt="b" />, { journal })).resolves.toBe("<b>")
    off()
    expect(calls).toEqual(["a", "b"])
    expect(trace.events.filter((e) => e.name === "journal.divergence").map((e) => e.attributes.key)).toEqual([
      "agent:c.e0/A.",
    ])
    // The recorded step is found, but the depth check comes first, as without a journal.
    function Deep({ n }: { n: number }): any {
      return n === 0 ? evaluate(<Agent>a</Agent>) : <Deep n={n - 1} />
    }
    const error = await failureOf(() => runtime.evaluate(<Deep n={3} />, { journal }))
    const plain = await failureOf(() => runtime.evaluate(<Deep n={3} />))
    expect((error as Error).message).toBe((plain as Error).message)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(calls).toEqual(["a", "b"])
  })

  it("replays any recorded text exactly, even one that starts with the engine's NUL mark", async () => {
    const texts = ["\u0000R1\n-1\nspan-1", "\u0000", "\u0000T", "", "plain"]
    const provider = { name: "p", run: async (request: any) => ({ text: texts[Number(request.prompt)] }) }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    function All() {
      return Promise.all(texts.map((_, i) => evaluate(<Agent>{String(i)}</Agent>)))
    }
    await expect(runtime.evaluate(<All />, { journal })).resolves.toBe(texts.join(""))
    let called = 0
    const replaying = new AmlRuntime({ agentProvider: { name: "p", run: async () => ({ text: String(++called) }) } })
    function Each() {
      return Promise.all(texts.map((_, i) => evaluate(<Agent>{String(i)}</Agent>))).then((parts) => JSON.stringify(parts))
    }
    await expect(replaying.evaluate(<Each />, { journal })).resolves.toBe(JSON.stringify(texts))
    expect(called).toBe(0)
  })
})

describe("recording evaluate(<Agent>prompt</Agent>) in its provider's reaction", () => {
  it("fails the Agent and the evaluation with a failing append, synchronous or not", async () => {
    const { provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    function One() {
      return evaluate(<Agent>a</Agent>)
    }
    const boom = new Error("journal full")
    for (const journal of [
      { append: () => { throw boom }, entries: () => [] },
      { append: () => Promise.reject(boom), entries: () => [] },
    ]) {
      const trace = traceRecorder()
      const off = runtime.on("trace", trace.sink)
      expect(await failureOf(() => runtime.evaluate(<One />, { journal }))).toBe(boom)
      off()
      const agent = trace.events.find((e) => e.type === "span.end" && e.kind === "agent")
      expect(agent.status).toBe("error")
    }
  })

  it("records what a live run returns and counts the real calls against maxAgentCalls", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 })
    const journal = createMemoryJournal()
    const error = await failureOf(() => runtime.evaluate(<Fan n={3} />, { journal }))
    expectError(error, EvaluationError, "AML evaluation exceeded maxAgentCalls 2 at Agent span-3")
    expect(calls).toEqual(["task 0", "task 1"])
    const entries = [...journal.entries()] as any[]
    expect(entries.map((e) => [e.key, e.kind, e.value])).toEqual([
      ["agent:c.e0/A.", "agent", { text: "<task 0>" }],
      ["agent:c.e1/A.", "agent", { text: "<task 1>" }],
    ])
    expect(entries.every((e) => Object.isFrozen(e) && Object.isFrozen(e.value) && /^[0-9a-f]{64}$/.test(e.digest))).toBe(true)
    // Recorded steps become entries once: every read sees the same frozen objects.
    expect(Object.isFrozen(journal.entries())).toBe(true)
    expect([...journal.entries()]).toEqual(entries)
    expect((journal.entries() as any[]).every((e, i) => e === entries[i])).toBe(true)
    // Another journal seeded with them replays the same steps.
    const seeded = createMemoryJournal(journal.entries())
    await expect(runtime.evaluate(<Fan n={2} />, { journal: seeded })).resolves.toBe("<task 0>,<task 1>")
    expect(calls).toEqual(["task 0", "task 1"])
    // The retry replays the two and calls the provider once, for the third.
    await expect(runtime.evaluate(<Fan n={3} />, { journal })).resolves.toBe("<task 0>,<task 1>,<task 2>")
    expect(calls).toEqual(["task 0", "task 1", "task 2"])
  })
})

describe("answers recorded natively into a memory journal", () => {
  it("keep their order among appended entries: a later entry for a key wins either way", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await runtime.evaluate(<Fan n={3} />, { journal })
    // The same workflow recorded elsewhere gives the digests, without reading `journal`
    // (reading would make its native answers entry objects before the next run files them).
    const other = createMemoryJournal()
    await runtime.evaluate(<Fan n={3} />, { journal: other })
    const second = (other.entries() as any[])[1]
    journal.append(Object.freeze({ digest: second.digest, key: second.key, kind: "agent", value: Object.freeze({ text: "appended" }) }))
    calls.length = 0
    // The appended entry came after the natively recorded one for its key.
    await expect(runtime.evaluate(<Fan n={3} />, { journal })).resolves.toBe("<task 0>,appended,<task 2>")
    expect(calls).toEqual([])
    // A changed prompt re-runs and is recorded natively after the appended entry.
    function Changed() {
      return Promise.all([evaluate(<Agent>task 0</Agent>), evaluate(<Agent>changed</Agent>), evaluate(<Agent>task 2</Agent>)]).then(
        (parts) => parts.join(","),
      )
    }
    await expect(runtime.evaluate(<Changed />, { journal })).resolves.toBe("<task 0>,<changed>,<task 2>")
    expect(calls).toEqual(["changed"])
    await expect(runtime.evaluate(<Changed />, { journal })).resolves.toBe("<task 0>,<changed>,<task 2>")
    expect(calls).toEqual(["changed"])
    // Read back, every step is a frozen entry in append order, native or not.
    const entries = journal.entries() as any[]
    expect(entries.map((e) => [e.key, e.value.text])).toEqual([
      ["agent:c.e0/A.", "<task 0>"],
      ["agent:c.e1/A.", "<task 1>"],
      ["agent:c.e2/A.", "<task 2>"],
      ["agent:c.e1/A.", "appended"],
      ["agent:c.e1/A.", "<changed>"],
    ])
    expect(entries.every((e) => Object.isFrozen(e) && Object.isFrozen(e.value) && e.kind === "agent")).toBe(true)
    expect(entries[1].digest).toBe(second.digest)
    expect(entries[4].digest).not.toBe(second.digest)
  })

  it("are the entries a journal object of the application's receives, field for field", async () => {
    const { provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stored: any[] = []
    await runtime.evaluate(<Fan n={4} />, { journal: { append: (entry: any) => void stored.push(entry), entries: () => stored } })
    const builtIn = createMemoryJournal()
    await runtime.evaluate(<Fan n={4} />, { journal: builtIn })
    expect([...builtIn.entries()]).toEqual(stored)
  })
})
