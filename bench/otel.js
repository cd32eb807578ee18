// The OpenTelemetry exporter's cost on the 2,000 fanned-out Agents workload (bench/agents.js):
// no trace listener, a no-op trace listener (AML's own tracing cost), and the exporter with a
// no-op span processor and with the in-memory exporter. Rounds are interleaved across the
// variants so load drift on a shared machine hits them alike; wall and CPU time (user +
// system of this process) are both reported as medians per Agent.
//
// Reference rows (the floor no exporter can go below): 2,000 bare OTel spans per round on
// the no-op processor, `startSpan(name, { startTime, attributes }, parent)`, `setStatus`,
// `end(t)`, with 5 attributes and with the 11 an exported fan-out Agent carries, and the
// latter on the in-memory exporter (what its span processor and exporter add per span).
import { context, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"

import { availableParallelism, loadavg } from "node:os"

import { Agent, AmlRuntime, createOpenTelemetryTracer, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

const FAN_OUT = 2_000
const ROUNDS = 15
const WARMUP = 4

const provider = {
  name: "bench",
  async run(request) {
    return { text: request.prompt.length > 40 ? "long" : request.prompt }
  },
}

function FanOut() {
  return Promise.all(Array.from({ length: FAN_OUT }, (_, i) => evaluate(jsx(Agent, { children: `task ${i}` })))).then(
    (results) => results.length,
  )
}

const noopProcessor = { forceFlush: async () => {}, onEnd() {}, onStart() {}, shutdown: async () => {} }

function variants() {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const memory = new InMemorySpanExporter()
  const noopTracer = new BasicTracerProvider({ spanProcessors: [noopProcessor] }).getTracer("bench")
  const memoryTracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer("bench")
  const runtime = (trace) => new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0, trace })
  const parent = trace.setSpan(context.active(), noopTracer.startSpan("parent"))
  return [
    { label: "no trace listener", runtime: runtime(undefined) },
    { label: "no-op trace listener", runtime: runtime(() => {}) },
    { label: "OTel exporter, no-op span processor", runtime: runtime(createOpenTelemetryTracer({ tracer: noopTracer })) },
    {
      label: "OTel exporter, in-memory exporter",
      reset: () => memory.reset(),
      runtime: runtime(createOpenTelemetryTracer({ tracer: memoryTracer })),
    },
    { label: "reference: bare OTel span, 5 attributes", reference: true, run: () => bareSpans(noopTracer, parent, 5) },
    { label: "reference: bare OTel span, 11 attributes", reference: true, run: () => bareSpans(noopTracer, parent, 11) },
    {
      label: "reference: bare span, 11, in-memory",
      reference: true,
      reset: () => memory.reset(),
      run: () => bareSpans(memoryTracer, parent, 11),
    },
  ]
}

const ATTRIBUTES = [
  ["aml.span.kind", "agent"],
  ["aml.span.name", "Agent"],
  ["aml.run.id", "9b2f6c1e-4a47-4d3c-9a51-1f0e2d3c4b5a"],
  ["gen_ai.operation.name", "invoke_agent"],
  ["aml.parent.span.id", "trace-1"],
  ["aml.provider", "bench"],
  ["aml.tools", 0],
  ["aml.mcpServers", 0],
  ["aml.turns", 1],
  ["gen_ai.provider.name", "bench"],
]

/** FAN_OUT bare spans with `count` attributes (the last one, the span id, varies). */
function bareSpans(tracer, parent, count) {
  const fixed = ATTRIBUTES.slice(0, count - 1)
  for (let i = 0; i < FAN_OUT; i++) {
    const attributes = Object.fromEntries(fixed)
    attributes["aml.span.id"] = `span-${i}`
    const start = performance.timeOrigin + performance.now()
    const span = tracer.startSpan("invoke_agent", { attributes, startTime: start }, parent)
    span.setStatus({ code: 0 })
    span.end(start + 0.01)
  }
}

async function once(variant) {
  variant.reset?.()
  globalThis.gc?.()
  const cpu = process.cpuUsage()
  const started = performance.now()
  if (variant.run !== undefined) variant.run()
  else await variant.runtime.evaluate(jsx(FanOut, {}))
  const wall = ((performance.now() - started) * 1000) / FAN_OUT
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / FAN_OUT, wall }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function otelBenchmarks() {
  const all = variants()
  for (let i = 0; i < WARMUP; i++) for (const variant of all) await once(variant)
  const samples = all.map(() => ({ cpu: [], wall: [] }))
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < all.length; i++) {
      const { cpu, wall } = await once(all[i])
      samples[i].wall.push(wall)
      samples[i].cpu.push(cpu)
    }
  }
  const base = { cpu: median(samples[0].cpu), wall: median(samples[0].wall) }
  console.log(`2,000 fanned-out Agents with the OpenTelemetry exporter (${ROUNDS} interleaved rounds, medians per Agent or span)`)
  all.forEach((variant, i) => {
    const wall = median(samples[i].wall)
    const cpu = median(samples[i].cpu)
    const overhead = i === 0 || variant.reference ? "" : `  overhead vs none: wall ${(wall - base.wall).toFixed(2)} µs, CPU ${(cpu - base.cpu).toFixed(2)} µs`
    console.log(`  ${variant.label.padEnd(42)} wall ${wall.toFixed(2)} µs  CPU ${cpu.toFixed(2)} µs${overhead}`)
  })
  console.log(`  load average (1, 5, 15 min): ${loadavg().map((load) => load.toFixed(2)).join(", ")} on ${availableParallelism()} CPUs`)
}
