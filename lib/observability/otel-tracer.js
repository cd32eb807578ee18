// createOpenTelemetryTracer (docs/OBSERVABILITY.md): a trace listener that turns AML's trace
// stream into OpenTelemetry spans. AML span → OTel span (parent from parentSpanId, times from
// the records), point events → span events, failures → ERROR status plus an `exception` event.
//
// Cost (bench/otel.js): the listener is a record sink (trace-sink.js), so the runtime builds
// no AML event objects for it and hands it the engine's records in batches. An OTel span is
// created once, when its AML span ends, with all its attributes — unless something needs it
// earlier: a child span (its parent context) or user code reading the active span. User
// code runs with a lazy context (otel-lazy-context.js) that creates its span on first read,
// so a provider call nobody instruments costs no early span. The same listener function
// still accepts AML's public events, for a runtime copy that does not know sinks.

import { addEndAttributes, copyAmlAttributes, errorType, spanName, startAttributes } from "./otel-attributes.js"
import { loadOpenTelemetryApi, sdkVersion } from "./otel-api.js"
import { spanStateClass } from "./otel-lazy-context.js"
import { SPAN_RUNNER } from "./span-runner.js"
import { TRACE_SINK } from "./trace-sink.js"
import { wallClockDrift } from "./wall-clock.js"

/** Component names that say nothing about what an Agent inside them is for. */
const GENERIC_COMPONENTS = new Set(["AnonymousComponent", "Fragment"])

/**
 * Epoch milliseconds with sub-millisecond precision, for AML events that carry no `at`: the
 * performance timeline anchored to `Date.now()` when the run began (`run.drift`), as the
 * record sinks' clock is (trace-sink.js traceClockOffset).
 */
const origin = performance.timeOrigin
function now(run) {
  return origin + performance.now() + (run?.drift ?? 0)
}

/**
 * Epoch milliseconds as an OTel HrTime `[seconds, nanoseconds]`: the form the SDK keeps and
 * takes as is (a number it compares with `performance.now()` first, then converts).
 */
function hrTime(ms) {
  let seconds = Math.trunc(ms / 1000)
  let nanos = Math.round((ms - seconds * 1000) * 1e6)
  if (nanos >= 1e9) {
    seconds += 1
    nanos -= 1e9
  }
  return [seconds, nanos]
}

function hasKeys(object) {
  for (const _ in object) return true
  return false
}

function readOptions(options) {
  const captureContent = options?.captureContent
  if (captureContent !== undefined && typeof captureContent !== "boolean") {
    throw new TypeError("createOpenTelemetryTracer captureContent must be a boolean")
  }
  const tracer = options?.tracer
  if (tracer !== undefined && (tracer === null || typeof tracer.startSpan !== "function")) {
    throw new TypeError("createOpenTelemetryTracer tracer must be an OpenTelemetry Tracer")
  }
  return { captureContent: captureContent ?? false, tracer }
}

/** One evaluation: the OTel context active at its root span, its open spans, its flush. */
class RunState {
  constructor(id, parentContext, flush) {
    this.id = id
    this.context = parentContext
    this.spans = new Map()
    this.flush = flush
    /** How far Date.now() was ahead of the performance timeline when the run began. */
    this.drift = wallClockDrift()
  }
}

export function createOpenTelemetryTracer(options) {
  const settings = readOptions(options)
  const api = loadOpenTelemetryApi()
  const tracer = settings.tracer ?? api.trace.getTracer("@aml-jsx/sdk", sdkVersion())
  const { context, trace, SpanStatusCode } = api
  const content = settings.captureContent
  const runs = new Map()
  /** The run of the previous record: a batch is one run's records, so this saves a lookup per record. */
  let lastRun
  /** True while records are being turned into spans: a lazy context must not flush then. */
  let delivering = false

  const SpanState = spanStateClass(api, (state) => {
    // The start record may still wait in the engine's batch: deliver it first.
    if (!state.seen && !delivering) state.run.flush?.()
    return state.seen ? contextOf(state) : state.run.context
  })

  function runOf(runId, flush) {
    if (lastRun !== undefined && lastRun.id === runId) return lastRun
    let run = runs.get(runId)
    if (run === undefined) {
      // The run's first record is its root span start, delivered inside evaluate()'s own
      // async function, so this is the caller's context (context propagation into AML).
      run = new RunState(runId, context.active(), flush)
      runs.set(runId, run)
    }
    lastRun = run
    return run
  }

  function parentContextOf(state) {
    const parent = state.parent
    // A parent this listener never saw (attached mid-run) falls back to the run's context.
    return parent === undefined || !parent.seen ? state.run.context : contextOf(parent)
  }

  /** The OTel context with the span's OTel span active: made once per span, shared by its children. */
  function contextOf(state) {
    if (state.context === undefined) state.context = trace.setSpan(state.run.context, spanOf(state))
    return state.context
  }

  function create(state, attributes) {
    const name = spanName(state.kind, state.name, state.agentName)
    // INTERNAL is the API's default kind; times as HrTime, the form the SDK stores.
    const span = tracer.startSpan(name, { attributes, startTime: hrTime(state.start) }, parentContextOf(state))
    state.span = span
    const events = state.events
    if (events !== undefined) {
      state.events = undefined
      for (const [eventName, eventAttributes, time] of events) span.addEvent(eventName, eventAttributes, hrTime(time))
    }
    return span
  }

  /** The span's OTel span, created now (with its start attributes) if it does not exist yet. */
  function spanOf(state) {
    return state.span ?? create(state, startAttributes(state, state.run.id))
  }

  function started(run, spanId, parentSpanId, kind, name, attributes, start) {
    let state = run.spans.get(spanId)
    if (state === undefined) {
      state = new SpanState(run)
      run.spans.set(spanId, state)
    }
    const parent = parentSpanId === undefined ? undefined : run.spans.get(parentSpanId)
    state.seen = true
    state.id = spanId
    state.parentId = parentSpanId
    state.parent = parent
    state.kind = kind
    state.name = name
    state.attributes = attributes
    state.agentName = kind === "component" && !GENERIC_COMPONENTS.has(name) ? name : parent?.agentName
    state.start = start
  }

  function ended(run, spanId, kind, failed, durationMs, attributes) {
    const state = run?.spans.get(spanId)
    if (state === undefined) return
    run.spans.delete(spanId)
    if (!state.seen) return
    // AML's duration (performance.now() based) is authoritative for the end time.
    const end = state.start + durationMs
    let span = state.span
    if (span === undefined) span = create(state, addEndAttributes(startAttributes(state, run.id), kind, attributes, failed))
    else span.setAttributes(addEndAttributes({}, kind, attributes, failed))
    const endTime = hrTime(end)
    if (failed) {
      const type = errorType(attributes)
      // `error.message` is a sensitive AML attribute: only a content-capturing listener has it.
      const message = attributes["error.message"]
      const exception = { "exception.type": type }
      if (typeof message === "string") exception["exception.message"] = message
      span.addEvent("exception", exception, endTime)
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === "string" ? message : type })
    }
    span.end(endTime)
    if (kind === "evaluation") {
      runs.delete(run.id)
      if (lastRun === run) lastRun = undefined
    }
  }

  function pointEvent(run, spanId, name, attributes, time) {
    const state = run?.spans.get(spanId)
    if (state === undefined || !state.seen) return
    const eventAttributes = copyAmlAttributes({}, attributes)
    if (state.span !== undefined) state.span.addEvent(name, eventAttributes, hrTime(time))
    else (state.events ??= []).push([name, eventAttributes, time])
  }

  /** The attributes of a compact record: with the sensitive ones only for a consenting exporter. */
  function recordAttributes(attributes, sensitive) {
    return content && sensitive !== undefined && hasKeys(sensitive) ? { ...attributes, ...sensitive } : attributes
  }

  /** The run of an end or point record: a run this listener never saw has none. */
  function knownRun(runId) {
    return lastRun !== undefined && lastRun.id === runId ? lastRun : runs.get(runId)
  }

  /** The record sink (trace-sink.js, compact records): the runtime's cheap path. */
  function sink(runId, record, control) {
    const type = record[0]
    delivering = true
    try {
      if (type === 1) ended(knownRun(runId), record[1], record[2], record[3], record[4], recordAttributes(record[5], record[6]))
      else if (type === 0) {
        const attributes = recordAttributes(record[6], record[7])
        const run = runOf(runId, control.flush)
        started(run, record[1], record[2] ?? undefined, record[3], record[4], attributes, control.clockOffset + record[5])
      } else if (type === 2) {
        pointEvent(knownRun(runId), record[1], record[2], recordAttributes(record[4], record[5]), control.clockOffset + record[3])
      }
    } finally {
      delivering = false
    }
  }

  /** AML's public events (a runtime copy without sinks, or a direct call). */
  function listener(event) {
    const type = event.type
    if (type === "span.start") {
      const run = runOf(event.runId, undefined)
      started(run, event.spanId, event.parentSpanId, event.kind, event.name, event.attributes, now(run))
    } else if (type === "span.end") {
      ended(knownRun(event.runId), event.spanId, event.kind, event.status === "error", event.durationMs, event.attributes)
    } else if (type === "event") {
      const run = knownRun(event.runId)
      pointEvent(run, event.spanId, event.name, event.attributes, now(run))
    }
  }

  function runInSpan(runId, spanId, fn) {
    const run = knownRun(runId)
    if (run === undefined) return fn()
    let state = run.spans.get(spanId)
    if (state === undefined) {
      state = new SpanState(run)
      run.spans.set(spanId, state)
    }
    // The real context once the OTel span exists; until then the state itself (a lazy context).
    return context.with(state.context ?? state, fn)
  }

  Object.defineProperty(listener, "captureContent", {
    configurable: false,
    enumerable: true,
    value: settings.captureContent,
    writable: false,
  })
  Object.defineProperty(listener, SPAN_RUNNER, { configurable: false, enumerable: false, value: runInSpan, writable: false })
  Object.defineProperty(listener, TRACE_SINK, { configurable: false, enumerable: false, value: sink, writable: false })
  return Object.freeze(listener)
}
