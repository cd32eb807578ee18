// How the journal replays (docs/JOURNAL.md, "Replay and divergence"): built-in journals
// answer plain-text Agents inside the engine, any other journal object through its
// entries(); the digest covers what only JS holds (Tool schemas), and replays keep the
// span structure and order of a live run.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, FollowUp, Tool, createMemoryJournal, defineTool, evaluate } from "@aml-jsx/sdk"

import { traceRecorder } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

function counting() {
  const calls: string[] = []
  const provider = {
    name: "p",
    async run(request: any) {
      calls.push(request.prompt)
      return { text: `${request.prompt}:${request.followUps?.length ?? 0}` }
    },
  }
  return { calls, provider }
}

function Fan({ n }: { n: number }) {
  return Promise.all(Array.from({ length: n }, (_, i) => evaluate(<Agent>{`task ${i}`}</Agent>))).then((parts) =>
    parts.join(","),
  )
}

function spanShape(events: any[]) {
  const kinds = new Map(events.filter((e) => e.type === "span.start").map((e) => [e.spanId, e.kind]))
  return events
    .filter((e) => e.type === "span.end")
    .map((e) => `${e.kind}<${kinds.get(e.parentSpanId) ?? "-"}`)
    .sort()
}

describe("replaying from a built-in journal", () => {
  it("keeps the output, spans and replay events of fanned-out Agents", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const live = traceRecorder()
    const off = runtime.on("trace", live.sink)
    const expected = await runtime.evaluate(<Fan n={5} />, { journal })
    off()
    expect(calls).toHaveLength(5)
    const replayed = traceRecorder()
    runtime.on("trace", replayed.sink)
    await expect(runtime.evaluate(<Fan n={5} />, { journal })).resolves.toBe(expected)
    expect(calls).toHaveLength(5)
    expect(spanShape(replayed.events)).toEqual(spanShape(live.events))
    const ends = replayed.events.filter((e) => e.type === "span.end" && e.kind === "agent")
    expect(ends.map((e) => e.attributes["journal.replayed"])).toEqual([true, true, true, true, true])
    const points = replayed.events.filter((e) => e.name === "journal.replay")
    expect(points.map((e) => e.spanId).sort()).toEqual(ends.map((e) => e.spanId).sort())
    expect(new Set(points.map((e) => e.attributes.key)).size).toBe(5)
    // Each replay event comes inside its Agent span, before the span ends.
    for (const point of points) {
      const end = replayed.events.findIndex((e) => e.type === "span.end" && e.spanId === point.spanId)
      expect(replayed.events.indexOf(point)).toBeLessThan(end)
    }
  })

  it("replays from a journal seeded with another journal's entries, and refuses non-records", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const first = createMemoryJournal()
    await runtime.evaluate(<Fan n={3} />, { journal: first })
    calls.length = 0
    const copy = createMemoryJournal(first.entries())
    await expect(runtime.evaluate(<Fan n={3} />, { journal: copy })).resolves.toBe("task 0:0,task 1:0,task 2:0")
    expect(calls).toEqual([])
    const broken = createMemoryJournal([...first.entries(), { key: "k" } as any])
    expectError(
      await failureOf(() => runtime.evaluate(<Fan n={3} />, { journal: broken })),
      TypeError,
      "AML journal entries must be { key, digest, kind, value } records",
    )
  })

  it("keeps follow-ups in the digest and the replayed turns", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const tree = (followUp: string) => (
      <Agent>
        ask<FollowUp>{followUp}</FollowUp>
      </Agent>
    )
    await runtime.evaluate(tree("more"), { journal })
    await expect(runtime.evaluate(tree("more"), { journal })).resolves.toBe("ask:1")
    expect(calls).toEqual(["ask"])
    await runtime.evaluate(tree("else"), { journal })
    expect(calls).toEqual(["ask", "ask"])
  })
})

describe("replaying from any journal object", () => {
  it("replays through entries() with the same keys as a built-in journal", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stored: any[] = []
    const journal = { append: (entry: any) => void stored.push(entry), entries: () => stored }
    const builtIn = createMemoryJournal()
    await runtime.evaluate(<Fan n={4} />, { journal })
    await runtime.evaluate(<Fan n={4} />, { journal: builtIn })
    expect(stored.map((e) => [e.key, e.digest])).toEqual(builtIn.entries().map((e) => [e.key, e.digest]))
    calls.length = 0
    await expect(runtime.evaluate(<Fan n={4} />, { journal })).resolves.toBe("task 0:0,task 1:0,task 2:0,task 3:0")
    expect(calls).toEqual([])
  })
})

describe("the digest of an Agent with Tools", () => {
  function priced(schema: z.ZodType) {
    return defineTool({ description: "price", execute: async () => ({ ok: true }), input: schema, name: "price" })
  }

  it("replays while the Tool's input schema is the same and diverges when it changed", async () => {
    const { calls, provider } = counting()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    const tree = (tool: any) => (
      <Agent>
        quote<Tool use={tool} />
      </Agent>
    )
    await runtime.evaluate(tree(priced(z.object({ sku: z.string() }))), { journal })
    await runtime.evaluate(tree(priced(z.object({ sku: z.string() }))), { journal })
    expect(calls).toEqual(["quote"])
    const { events, sink } = traceRecorder()
    runtime.on("trace", sink)
    await runtime.evaluate(tree(priced(z.object({ sku: z.number() }))), { journal })
    expect(calls).toEqual(["quote", "quote"])
    expect(events.filter((e) => e.name?.startsWith("journal.")).map((e) => e.name)).toEqual(["journal.step", "journal.divergence"])
  })
})

describe("recording from a component", () => {
  it("waits for an asynchronous append before the component's next step", async () => {
    const order: string[] = []
    const stored: any[] = []
    const journal = {
      entries: () => stored,
      async append(entry: any) {
        await new Promise((resolve) => setTimeout(resolve, 2))
        stored.push(entry)
        order.push("stored")
      },
    }
    const provider = {
      name: "p",
      async run(request: any) {
        order.push(`run ${request.prompt}`)
        return { text: request.prompt }
      },
    }
    async function Steps() {
      const a = await evaluate(<Agent>a</Agent>)
      order.push(`got ${a}`)
      const b = await evaluate(<Agent>b</Agent>)
      return a + b
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate(<Steps />, { journal })).resolves.toBe("ab")
    expect(order).toEqual(["run a", "stored", "got a", "run b", "stored"])
    order.length = 0
    await expect(runtime.evaluate(<Steps />, { journal })).resolves.toBe("ab")
    expect(order).toEqual(["got a"])
  })
})
