// The exporter's cheap path (docs/OBSERVABILITY.md "Cost"): while it is the only trace
// listener it consumes the engine's records in batches (lib/observability/trace-sink.js) and creates each
// OTel span once, at its end, unless user code reads it earlier (lib/observability/otel-lazy-context.js).
// The exported trace must be the one the event path produces.
import { context, trace } from "@opentelemetry/api"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, createOpenTelemetryTracer, evaluate } from "@aml-jsx/sdk"

import { tracedWorkflow } from "./otel-workflow.js"
import { memoryTracing, spanTree } from "./support/otel.js"

const ms = (time: readonly [number, number]) => time[0] * 1000 + time[1] / 1e6
const SINK = Symbol.for("@aml-jsx/sdk/trace-record-sink")

/** Every span as name, parent name, attributes (ids dropped), events and status. */
function shape(spans: readonly ReadableSpan[]) {
  const { parentName } = spanTree(spans)
  const volatile = new Set(["aml.run.id"])
  return spans
    .map((span) => ({
      attributes: Object.fromEntries(Object.entries(span.attributes).filter(([key]) => !volatile.has(key))),
      events: span.events.map((event) => [event.name, event.attributes]),
      name: span.name,
      parent: parentName(span),
      status: span.status,
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
}

async function exported(captureContent: boolean, withListener: boolean) {
  const { exporter, tracer } = memoryTracing()
  const { App, runtime } = tracedWorkflow(tracer, createOpenTelemetryTracer({ captureContent, tracer }))
  if (withListener) runtime.on("trace", () => {})
  await runtime.evaluate(<App />)
  return exporter.getFinishedSpans()
}

describe("the batched path", () => {
  for (const captureContent of [false, true]) {
    it(`exports the same spans as the event path (captureContent ${captureContent})`, async () => {
      const batched = await exported(captureContent, false)
      const evented = await exported(captureContent, true)
      expect(batched.length).toBeGreaterThan(10)
      expect(shape(batched)).toEqual(shape(evented))
    })
  }

  it("places AML spans in the evaluation's time and user spans inside their AML span's times", async () => {
    const before = Date.now()
    const spans = await exported(false, false)
    const after = Date.now()
    for (const span of spans) {
      expect(ms(span.startTime)).toBeGreaterThanOrEqual(before - 1)
      expect(ms(span.endTime)).toBeLessThanOrEqual(after + 1)
    }
    const { one, parentName } = spanTree(spans)
    const user = one("user.component-http")
    const review = one("component Review")
    expect(parentName(user)).toBe("component Review")
    // The OTel SDK starts a span given no start time at whole Date.now() milliseconds.
    expect(ms(user.startTime)).toBeGreaterThanOrEqual(ms(review.startTime) - 1)
    expect(ms(user.endTime)).toBeLessThanOrEqual(ms(review.endTime) + 1)
  })

  it("has every span ended by the time evaluate() settles", async () => {
    const { exporter, tracer } = memoryTracing()
    const runtime = new AmlRuntime({
      agentProvider: { name: "p", run: async (request: any) => ({ text: request.prompt }) },
      maxAgentCalls: 0,
      maxConcurrentAgents: 0,
      trace: createOpenTelemetryTracer({ tracer }),
    })
    const FanOut = () => Promise.all(Array.from({ length: 300 }, (_, i) => evaluate(<Agent>task {i}</Agent>))).then(String)
    await runtime.evaluate(<FanOut />)
    const spans = exporter.getFinishedSpans()
    expect(spans.filter((span) => span.name === "invoke_agent FanOut")).toHaveLength(300)
    expect(spans.map((span) => span.name).filter((name) => !name.startsWith("invoke_agent"))).toEqual(["component FanOut", "aml.evaluate"])
  })
})

describe("the lazy active span", () => {
  it("is the exported span: reading it creates it once, with its end attributes added later", async () => {
    const { exporter, tracer } = memoryTracing()
    const seen: { spanId?: string; recording?: boolean } = {}
    const provider = {
      name: "p",
      async run() {
        const active = trace.getActiveSpan()!
        seen.spanId = active.spanContext().spanId
        seen.recording = active.isRecording()
        return { text: "ok" }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider, trace: createOpenTelemetryTracer({ tracer }) })
    await runtime.evaluate(<Agent>hi</Agent>)
    const agent = spanTree(exporter.getFinishedSpans()).one("invoke_agent")
    expect(agent.spanContext().spanId).toBe(seen.spanId)
    expect(seen.recording).toBe(true)
    expect(agent.attributes).toMatchObject({ "aml.provider": "p", "aml.turns": 1, "gen_ai.provider.name": "p" })
  })

  it("reads other keys from the caller's context and derives contexts that keep the span", async () => {
    const { exporter, tracer } = memoryTracing()
    const key = Symbol("caller key")
    let derivedParent: string | undefined
    let read: unknown
    function App() {
      read = context.active().getValue(key)
      const derived = context.active().setValue(Symbol("mine"), 1)
      const child = tracer.startSpan("user.derived", {}, derived)
      derivedParent = child.parentSpanContext?.spanId
      child.end()
      return "x"
    }
    const runtime = new AmlRuntime({ trace: createOpenTelemetryTracer({ tracer }) })
    await context.with(context.active().setValue(key, "from caller"), () => runtime.evaluate(<App />))
    expect(read).toBe("from caller")
    expect(derivedParent).toBe(spanTree(exporter.getFinishedSpans()).one("component App").spanContext().spanId)
  })
})

describe("listeners that come and go while the exporter batches", () => {
  it("a listener added mid-run gets no events from before it was added", async () => {
    const { exporter, tracer } = memoryTracing()
    const late: any[] = []
    const provider = { name: "p", run: async (request: any) => ({ text: request.prompt }) }
    const runtime = new AmlRuntime({ agentProvider: provider, trace: createOpenTelemetryTracer({ tracer }) })
    async function App() {
      await evaluate(<Agent>first</Agent>)
      runtime.on("trace", (event) => void late.push(event))
      await evaluate(<Agent>second</Agent>)
      return "x"
    }
    await runtime.evaluate(<App />)
    // The first Agent (span-1) happened before: neither its start nor its end.
    expect(late.filter((event) => event.spanId === "span-1")).toEqual([])
    expect(late.filter((event) => event.spanId === "span-2").map((event) => event.type)).toEqual(["span.start", "span.end"])
    // Spans open when it was added: only their end.
    expect(late.filter((event) => event.spanId === "trace-1").map((event) => event.type)).toEqual(["span.end"])
    expect(spanTree(exporter.getFinishedSpans()).named("invoke_agent App")).toHaveLength(2)
  })
})

describe("the record-sink protocol", () => {
  // Compact records (lib/observability/trace-sink.js): [0 start | 1 end | 2 event, spanId, …, sensitive?].
  function sinkListener(captureContent: boolean, sink: (runId: string, record: any[]) => void) {
    const listener = () => {
      throw new Error("a sink is not called as a listener")
    }
    Object.defineProperty(listener, SINK, { value: sink })
    Object.defineProperty(listener, "captureContent", { enumerable: true, value: captureContent })
    return listener
  }

  for (const withListener of [false, true]) {
    it(`hands sensitive attributes only to a consenting sink (${withListener ? "next to a listener" : "batched"})`, async () => {
      const outputs: Record<string, unknown[]> = { content: [], redacted: [] }
      const provider = { name: "p", run: async () => ({ text: "secret answer" }) }
      const runtime = new AmlRuntime({ agentProvider: provider })
      const output = (record: any[]) => (record[0] === 1 ? record[6]?.output : undefined)
      runtime.on("trace", sinkListener(false, (_, record) => void outputs.redacted!.push(output(record))))
      runtime.on("trace", sinkListener(true, (_, record) => void outputs.content!.push(output(record))))
      if (withListener) runtime.on("trace", () => {})
      await runtime.evaluate(<Agent>hi</Agent>)
      expect(outputs.content!.filter((value) => value !== undefined)).toEqual(["secret answer"])
      expect(outputs.redacted!.filter((value) => value !== undefined)).toEqual([])
      expect(outputs.redacted).toHaveLength(outputs.content!.length)
    })
  }

  it("reports a throwing sink to onTraceError with the redacted event, and keeps delivering", async () => {
    const failures: any[] = []
    const types: string[] = []
    const runtime = new AmlRuntime({
      onTraceError: (error, event) => void failures.push([(error as Error).message, event.type, event.spanId, event.attributes]),
    })
    runtime.on(
      "trace",
      sinkListener(false, (_, record) => {
        types.push(["span.start", "span.end", "event"][record[0]]!)
        if (record[0] === 0 && record[3] === "component") throw new Error("sink broke")
      }),
    )
    const App = () => "x"
    await runtime.evaluate(<App />)
    expect(failures).toEqual([["sink broke", "span.start", "trace-1", {}]])
    expect(types).toEqual(["span.start", "span.start", "span.end", "span.end"])
  })
})
