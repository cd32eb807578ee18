// One variant of the OpenTelemetry benchmark (bench/otel.js) in a process of its own:
// `node --expose-gc bench/otel-variant.js <variant> <mode>` prints `{ wall, cpu }`, the
// medians per Agent or span in microseconds.
//
// A process holds one configuration, as a real application does: interleaving runtimes with
// different trace listeners in one process makes the shared hot functions polymorphic, a cost
// no application pays. Modes:
//   steady    no forced collection; each round includes the scavenges its garbage causes
//             (the same method as `npm run bench -- agents`).
//   after-gc  a full collection before each round. V8 treats objects embedded in optimized
//             code weakly: when a round's domain, run and context objects die in that
//             collection, most hot functions are deoptimized ("weak objects" in
//             --trace-deopt) and each round re-optimizes them. Kept as a pessimistic figure.
import { context, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base"

import { AmlRuntime, createOpenTelemetryTracer } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

// The agents group's workload itself: its deterministic provider and 2,000-Agent fan-out.
import { FAN_OUT, FanOut, provider } from "./agents.js"

const noopProcessor = { forceFlush: async () => {}, onEnd() {}, onStart() {}, shutdown: async () => {} }

/** An exporter that takes every batch and keeps nothing: the BatchSpanProcessor's own cost. */
const discardingExporter = {
  export(_spans, done) {
    done({ code: 0 })
  },
  forceFlush: async () => {},
  shutdown: async () => {},
}

/**
 * What the exporter sets on each fan-out Agent span (docs/OBSERVABILITY.md "The mapping"):
 * AML's identity, the Agent's AML attributes and the GenAI ones; `aml.span.id` varies.
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
  const base = performance.timeOrigin + performance.now()
  for (let i = 0; i < FAN_OUT; i++) {
    const start = base + i * 0.001
    const attributes = attributesOf === undefined ? undefined : attributesOf(`span-${i + 2}`, RUN_ID)
    const span = tracer.startSpan("invoke_agent FanOut", { attributes, startTime: hrTime(start) }, parent)
    span.end(hrTime(start + 0.01))
  }
}

function tracerWith(processor) {
  return new BasicTracerProvider({ spanProcessors: [processor] }).getTracer("bench")
}

/**
 * A trace listener whose record sink (lib/observability/trace-sink.js) does nothing: AML's own
 * record path (the engine's records, the batch, its parsing and dispatch) with no exporter.
 */
function emptySink() {
  const listener = () => {}
  listener[Symbol.for("@aml-jsx/sdk/trace-record-sink")] = () => {}
  return listener
}

/** The variant named `key`: `{ run, reset? }`, built only when chosen. */
function variant(key) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const runtime = (listener) => {
    const aml = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0, trace: listener })
    return { run: () => aml.evaluate(jsx(FanOut, {})) }
  }
  const memory = new InMemorySpanExporter()
  const reference = (tracer, attributesOf) => {
    // The exporter's children reuse their parent's context (one per parent span): so do these.
    const parent = trace.setSpan(context.active(), tracer.startSpan("component FanOut"))
    return { run: () => referenceSpans(tracer, parent, attributesOf) }
  }
  const exporter = (tracer) => runtime(createOpenTelemetryTracer({ tracer }))
  // The same SDK span made inside the workload instead of in a loop of its own: the provider
  // makes one per Agent call, with no trace listener (its overhead vs "none" is the span's
  // cost among 2,000 Agents in flight, where the exporter makes its spans too).
  const inWorkload = (tracer) => {
    const parent = trace.setSpan(context.active(), tracer.startSpan("component FanOut"))
    let i = 0
    const spanning = {
      name: provider.name,
      run(request, executionContext) {
        const start = performance.timeOrigin + performance.now()
        const span = tracer.startSpan("invoke_agent FanOut", { attributes: agentSpanAttributes(`span-${i++}`, RUN_ID), startTime: hrTime(start) }, parent)
        span.end(hrTime(start + 0.01))
        return provider.run(request, executionContext)
      },
    }
    const aml = new AmlRuntime({ agentProvider: spanning, maxAgentCalls: 0, maxConcurrentAgents: 0 })
    return { run: () => aml.evaluate(jsx(FanOut, {})) }
  }
  const withReset = (built) => ({ ...built, reset: () => memory.reset() })
  switch (key) {
    case "none":
      return runtime(undefined)
    case "noop-listener":
      return runtime(() => {})
    case "empty-sink":
      return runtime(emptySink())
    case "exporter-api":
      // No global tracer provider is registered: the API's no-op tracer.
      return exporter(trace.getTracer("bench"))
    case "exporter-noop":
      return exporter(tracerWith(noopProcessor))
    case "exporter-memory":
      return withReset(exporter(tracerWith(new SimpleSpanProcessor(memory))))
    case "exporter-batch":
      return exporter(tracerWith(new BatchSpanProcessor(discardingExporter)))
    case "span12-noop":
      return reference(tracerWith(noopProcessor), agentSpanAttributes)
    case "span12-memory":
      return withReset(reference(tracerWith(new SimpleSpanProcessor(memory)), agentSpanAttributes))
    case "span12-batch":
      return reference(tracerWith(new BatchSpanProcessor(discardingExporter)), agentSpanAttributes)
    case "inline12-noop":
      return inWorkload(tracerWith(noopProcessor))
    case "inline12-memory":
      return withReset(inWorkload(tracerWith(new SimpleSpanProcessor(memory))))
    case "inline12-batch":
      return inWorkload(tracerWith(new BatchSpanProcessor(discardingExporter)))
    case "span0-noop":
      return reference(tracerWith(noopProcessor), undefined)
    case "span14-noop":
      return reference(tracerWith(noopProcessor), modelAgentSpanAttributes)
    default:
      throw new Error(`unknown OpenTelemetry bench variant ${key}`)
  }
}

const ROUNDS = { steady: 31, "after-gc": 15 }
const WARMUP = 12

async function once(chosen, forceGc) {
  chosen.reset?.()
  if (forceGc) globalThis.gc?.()
  const cpu = process.cpuUsage()
  const started = performance.now()
  await chosen.run()
  const wall = ((performance.now() - started) * 1000) / FAN_OUT
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / FAN_OUT, wall }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function main() {
  const [key, mode] = process.argv.slice(2)
  if (ROUNDS[mode] === undefined) throw new Error(`unknown OpenTelemetry bench mode ${mode}`)
  const chosen = variant(key)
  const forceGc = mode === "after-gc"
  for (let i = 0; i < WARMUP; i++) await once(chosen, forceGc)
  const walls = []
  const cpus = []
  for (let i = 0; i < ROUNDS[mode]; i++) {
    const { cpu, wall } = await once(chosen, forceGc)
    walls.push(wall)
    cpus.push(cpu)
  }
  console.log(JSON.stringify({ cpu: median(cpus), wall: median(walls) }))
}

await main()
