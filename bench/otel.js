// The OpenTelemetry exporter's cost on the 2,000 fanned-out Agents workload (bench/agents.js),
// and the OTel SDK's own floor per span (docs/OBSERVABILITY.md "Cost").
//
// Workload rows: no trace listener; a no-op trace listener (AML's own public-event cost);
// the exporter on the API's no-op tracer (no SDK: what AML and the exporter add before any
// span exists); the exporter on `@opentelemetry/sdk-trace-base` with a no-op span processor
// and with the in-memory exporter. Each Agent is one OTel span `invoke_agent FanOut` with
// the 12 attributes of AGENT_SPAN_ATTRIBUTES.
//
// Reference rows (the floor no exporter creating SDK spans goes below): 2,000 SDK spans per
// round made exactly as the exporter makes them — a fresh attributes object with the Agent
// span's attributes (its span id varies), `startSpan(name, { attributes, startTime }, parent)`
// with HrTime times under a cached parent context, `end(time)` — on the same two processor
// configurations; plus a span without attributes and one of an Agent with a `model` (14).
//
// Rounds are interleaved across all rows so load drift on a shared machine hits them alike;
// every round starts after a full GC (`--expose-gc`, bench/run.js) and includes the
// collections its own garbage causes. Wall and CPU time (user + system of this process, so
// also GC helper threads) are reported as medians per Agent or span.
import { context, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"

import { availableParallelism, loadavg } from "node:os"

import { Agent, AmlRuntime, createOpenTelemetryTracer, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

const FAN_OUT = 2_000
const ROUNDS = 25
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

/**
 * What the exporter sets on each fan-out Agent span (docs/OBSERVABILITY.md "The mapping"):
 * AML's identity (`aml.span.*`, `aml.run.id`, `aml.parent.span.id`), the Agent's AML
 * attributes (`aml.provider`, `aml.tools`, `aml.mcpServers`, `aml.turns`) and the GenAI ones
 * (`gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.provider.name`; the workload's
 * Agents have no `model`, so no `gen_ai.request.model`). `aml.span.id` varies per span.
 */
function agentSpanAttributes(spanId, runId) {
  return {
    "aml.span.kind": "agent",
    "aml.span.name": "Agent",
    "aml.span.id": spanId,
    "aml.run.id": runId,
    "aml.parent.span.id": "trace-1",
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "FanOut",
    "aml.provider": "bench",
    "aml.tools": 0,
    "aml.mcpServers": 0,
    "aml.turns": 1,
    "gen_ai.provider.name": "bench",
  }
}

/** The same span of an Agent with a `model`: `aml.model` and `gen_ai.request.model` on top (14). */
function modelAgentSpanAttributes(spanId, runId) {
  const attributes = agentSpanAttributes(spanId, runId)
  attributes["aml.model"] = "model-1"
  attributes["gen_ai.request.model"] = "model-1"
  return attributes
}

const RUN_ID = "9b2f6c1e-4a47-4d3c-9a51-1f0e2d3c4b5a"

function hrTime(ms) {
  const seconds = Math.trunc(ms / 1000)
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)]
}

/** FAN_OUT SDK spans made the way the exporter makes an Agent's span at its end. */
function referenceSpans(tracer, parent, attributesOf) {
  // Times come from arithmetic, as the exporter's do (record time + one clock offset).
  const base = performance.timeOrigin + performance.now()
  for (let i = 0; i < FAN_OUT; i++) {
    const start = base + i * 0.001
    const attributes = attributesOf === undefined ? undefined : attributesOf(`span-${i + 2}`, RUN_ID)
    const span = tracer.startSpan("invoke_agent FanOut", { attributes, startTime: hrTime(start) }, parent)
    span.end(hrTime(start + 0.01))
  }
}

function variants() {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const memory = new InMemorySpanExporter()
  const noopTracer = new BasicTracerProvider({ spanProcessors: [noopProcessor] }).getTracer("bench")
  const memoryTracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer("bench")
  // No global tracer provider is registered here: this is the API's no-op tracer.
  const apiOnlyTracer = trace.getTracer("bench")
  const runtime = (listener) => new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0, trace: listener })
  // The exporter's children reuse their parent's context (one per parent span): so do these.
  const parent = trace.setSpan(context.active(), noopTracer.startSpan("component FanOut"))
  const reset = () => memory.reset()
  return [
    { label: "no trace listener", runtime: runtime(undefined) },
    { label: "no-op trace listener", runtime: runtime(() => {}) },
    { label: "exporter, API no-op tracer (no SDK)", runtime: runtime(createOpenTelemetryTracer({ tracer: apiOnlyTracer })) },
    { label: "exporter, SDK no-op span processor", runtime: runtime(createOpenTelemetryTracer({ tracer: noopTracer })), sdk: 0 },
    { label: "exporter, SDK in-memory exporter", reset, runtime: runtime(createOpenTelemetryTracer({ tracer: memoryTracer })), sdk: 1 },
    { label: "SDK span, Agent's 12 attributes, no-op", run: () => referenceSpans(noopTracer, parent, agentSpanAttributes) },
    { label: "SDK span, Agent's 12 attributes, in-memory", reset, run: () => referenceSpans(memoryTracer, parent, agentSpanAttributes) },
    { label: "SDK span, no attributes, no-op", run: () => referenceSpans(noopTracer, parent, undefined) },
    { label: "SDK span, Agent with model (14), no-op", run: () => referenceSpans(noopTracer, parent, modelAgentSpanAttributes) },
  ]
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
const us = (value) => `${value.toFixed(2)} µs`

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
  const medians = samples.map((sample) => ({ cpu: median(sample.cpu), wall: median(sample.wall) }))
  const base = medians[0]
  console.log(`2,000 fanned-out Agents with the OpenTelemetry exporter (${ROUNDS} interleaved rounds, medians per Agent or span)`)
  all.forEach((variant, i) => {
    const { cpu, wall } = medians[i]
    const overhead = i === 0 || variant.run !== undefined ? "" : `  overhead vs none: wall ${us(wall - base.wall)}, CPU ${us(cpu - base.cpu)}`
    console.log(`  ${variant.label.padEnd(44)} wall ${us(wall).padStart(9)}  CPU ${us(cpu).padStart(9)}${overhead}`)
  })
  // Beyond the floor: the exporter's overhead minus one SDK span made the same way.
  const floors = [all.findIndex((v) => v.label.endsWith("12 attributes, no-op")), all.findIndex((v) => v.label.endsWith("12 attributes, in-memory"))]
  all.forEach((variant, i) => {
    if (variant.sdk === undefined) return
    const floor = medians[floors[variant.sdk]]
    const wall = medians[i].wall - base.wall - floor.wall
    const cpu = medians[i].cpu - base.cpu - floor.cpu
    console.log(`  ${variant.label} beyond its SDK span: wall ${us(wall)}, CPU ${us(cpu)}`)
  })
  console.log(`  load average (1, 5, 15 min): ${loadavg().map((load) => load.toFixed(2)).join(", ")} on ${availableParallelism()} CPUs`)
}
