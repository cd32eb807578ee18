// Late trace subscriptions (INVENTORY OBS-1): a listener added while spans are open receives
// their span.end (with full identity), never another run's events.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"

import { deferred } from "./support/async.js"

/** A provider that subscribes to its own evaluation's events during run(). */
function subscribing() {
  const seen = new Map<string, { finishes: any[]; traces: any[]; runId: string; spanId: string; parentSpanId: string }>()
  const provider = {
    name: "late",
    async run(request: any, context: any) {
      const record = {
        finishes: [] as any[],
        parentSpanId: context.trace.parentSpanId,
        runId: context.trace.runId,
        spanId: context.trace.spanId,
        traces: [] as any[],
      }
      seen.set(request.prompt, record)
      context.events.on("trace", (event: any) => {
        record.traces.push(event)
      })
      context.events.on("finish", (event: any) => {
        record.finishes.push(event)
      })
      // Let the other evaluation run meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 5))
      return { text: `[${request.prompt}]` }
    },
  }
  return { provider, seen }
}

describe("a trace listener added during a provider run", () => {
  it("receives the end of its own Agent span and the spans above it, once, with identity", async () => {
    const { provider, seen } = subscribing()
    const runtime = new AmlRuntime({ agentProvider: provider })
    function Outer() {
      return <Agent model="m">one</Agent>
    }
    await expect(runtime.evaluate(<Outer />)).resolves.toBe("[one]")
    const record = seen.get("one")!
    expect(record.traces.every((event) => event.type === "span.end")).toBe(true)
    expect(
      record.traces.map((event) => ({
        kind: event.kind,
        name: event.name,
        parentSpanId: event.parentSpanId,
        runId: event.runId,
        spanId: event.spanId,
        status: event.status,
      })),
    ).toEqual([
      { kind: "agent", name: "Agent", parentSpanId: "trace-1", runId: record.runId, spanId: "span-1", status: "ok" },
      { kind: "component", name: "Outer", parentSpanId: "trace-0", runId: record.runId, spanId: "trace-1", status: "ok" },
      { kind: "evaluation", name: "evaluate", parentSpanId: undefined, runId: record.runId, spanId: "trace-0", status: "ok" },
    ])
    const agentEnd = record.traces[0]
    expect(agentEnd.spanId).toBe(record.spanId)
    expect(agentEnd.parentSpanId).toBe(record.parentSpanId)
    // Attributes are complete although tracing was off when the span opened.
    expect({ ...agentEnd.attributes }).toEqual({ mcpServers: 0, model: "m", provider: "late", tools: 0, turns: 1 })
    expect(record.finishes).toHaveLength(1)
    expect(record.finishes[0]).toMatchObject({ runId: record.runId, status: "ok" })
  })

  it("two concurrent evaluations on one runtime: each listener sees only its own run", async () => {
    const { provider, seen } = subscribing()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const gate = deferred()
    async function Waits({ prompt }: { prompt: string }) {
      await gate.promise
      return evaluate(<Agent>{prompt}</Agent>)
    }
    const first = runtime.evaluate(<Waits prompt="a" />)
    const second = runtime.evaluate(
      <>
        <Waits prompt="b" />
        <Agent>c</Agent>
      </>,
    )
    gate.resolve()
    await expect(Promise.all([first, second])).resolves.toEqual(["[a]", "[b][c]"])
    const a = seen.get("a")!
    const b = seen.get("b")!
    const c = seen.get("c")!
    expect(a.runId).not.toBe(b.runId)
    expect(b.runId).toBe(c.runId)
    for (const record of [a, b, c]) {
      expect(record.traces.length).toBeGreaterThan(0)
      for (const event of record.traces) expect(event.runId).toBe(record.runId)
      // Its own Agent span's end, exactly once.
      expect(record.traces.filter((event) => event.type === "span.end" && event.spanId === record.spanId)).toHaveLength(1)
      expect(record.finishes).toHaveLength(1)
      expect(record.finishes[0].runId).toBe(record.runId)
    }
    // Every span.end has the identity of a span the run really opened (no duplicates).
    const ends = a.traces.filter((event) => event.type === "span.end").map((event) => event.spanId)
    expect(new Set(ends).size).toBe(ends.length)
    expect(ends.at(-1)).toBe("trace-0")
  })
})
