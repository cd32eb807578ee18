// createOpenTelemetryTracer (docs/OBSERVABILITY.md): a trace listener that turns AML's trace
// stream into OpenTelemetry spans. AML span → OTel span (parent from parentSpanId, times from
// the events), point events → span events, failures → ERROR status plus an `exception` event.
// It also carries a span runner (span-runner.js) so user code inside a component, provider
// call or Tool executor runs with that span active in the OTel context.

import { endAttributes, errorType, copyAmlAttributes, spanName, startAttributes } from "./otel-attributes.js"
import { loadOpenTelemetryApi, sdkVersion } from "./otel-api.js"
import { SPAN_RUNNER } from "./span-runner.js"

/** Component names that say nothing about what an Agent inside them is for. */
const GENERIC_COMPONENTS = new Set(["AnonymousComponent", "Fragment"])

/**
 * Epoch milliseconds with sub-millisecond precision. AML dispatches each event right after
 * the native step that produced it, so this is (close to) the event's time; its `timestamp` is `Date.now()`, whose whole
 * milliseconds would misorder AML spans against spans the application starts in between.
 */
const origin = performance.timeOrigin
function now() {
  return origin + performance.now()
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

export function createOpenTelemetryTracer(options) {
  const settings = readOptions(options)
  const api = loadOpenTelemetryApi()
  const tracer = settings.tracer ?? api.trace.getTracer("@aml-jsx/sdk", sdkVersion())
  const { context, trace, SpanKind, SpanStatusCode } = api

  /**
   * runId → { context, spans }. `context` is the OTel context active when the run's first
   * event (the root span start, dispatched synchronously inside the caller's async context)
   * arrived; `spans` maps open AML span ids to `{ span, start, agentName, context? }`.
   */
  const runs = new Map()

  function runOf(runId) {
    let run = runs.get(runId)
    if (run === undefined) {
      run = { context: context.active(), spans: new Map() }
      runs.set(runId, run)
    }
    return run
  }

  function contextOf(run, record) {
    if (record.context === undefined) record.context = trace.setSpan(run.context, record.span)
    return record.context
  }

  function started(event) {
    const run = runOf(event.runId)
    const parent = event.parentSpanId === undefined ? undefined : run.spans.get(event.parentSpanId)
    // A parent this listener never saw (attached mid-run) falls back to the run's context.
    const parentContext = parent === undefined ? run.context : contextOf(run, parent)
    const { kind, name } = event
    const agentName = kind === "component" && !GENERIC_COMPONENTS.has(name) ? name : parent?.agentName
    const start = now()
    const span = tracer.startSpan(
      spanName(kind, name, agentName),
      { attributes: startAttributes(event, agentName), kind: SpanKind.INTERNAL, startTime: start },
      parentContext,
    )
    run.spans.set(event.spanId, { agentName, context: undefined, span, start })
  }

  function ended(event) {
    const run = runs.get(event.runId)
    const record = run?.spans.get(event.spanId)
    if (record === undefined) return
    run.spans.delete(event.spanId)
    const span = record.span
    const end = record.start + event.durationMs
    span.setAttributes(endAttributes(event))
    if (event.status === "error") {
      const type = errorType(event)
      // AML's duration (performance.now() based) is authoritative for the end time.
    // `error.message` is a sensitive AML attribute: only a content-capturing listener has it.
      const message = event.attributes["error.message"]
      const exception = { "exception.type": type }
      if (typeof message === "string") exception["exception.message"] = message
      span.addEvent("exception", exception, end)
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === "string" ? message : type })
    }
    span.end(end)
    if (event.kind === "evaluation") runs.delete(event.runId)
  }

  function pointEvent(event) {
    const record = runs.get(event.runId)?.spans.get(event.spanId)
    if (record !== undefined) record.span.addEvent(event.name, copyAmlAttributes({}, event.attributes), now())
  }

  function listener(event) {
    const type = event.type
    if (type === "span.start") started(event)
    else if (type === "span.end") ended(event)
    else if (type === "event") pointEvent(event)
  }

  function runInSpan(runId, spanId, fn) {
    const run = runs.get(runId)
    const record = run?.spans.get(spanId)
    return record === undefined ? fn() : context.with(contextOf(run, record), fn)
  }

  Object.defineProperty(listener, "captureContent", {
    configurable: false,
    enumerable: true,
    value: settings.captureContent,
    writable: false,
  })
  Object.defineProperty(listener, SPAN_RUNNER, { configurable: false, enumerable: false, value: runInSpan, writable: false })
  return Object.freeze(listener)
}
