// Trace delivery and driver-owned spans of one evaluation domain: the base class of
// EvaluationDomain (domain.js), whose constructor sets every field used here (`native`,
// `trace`, `tracing`, `traceListened`, `recorders`, `recorderContent`, `traceContent`, `traceBatched`, `traceCredit`, `traceImmediate`, `drainTraceNow`,
// `runtimeListeners`, `local`, `spanRunner`, `disposed`). A class of its own so the domain's
// task and scheduling work and its trace work can be read apart.

import { describeError } from "../errors/error-shape.js"
import { findSpanRunner } from "../observability/span-runner.js"
import { TRACE_BATCH_STEPS } from "../observability/trace-sink.js"

function attributesJson(attributes) {
  return attributes === undefined ? undefined : JSON.stringify(attributes)
}

export class DomainTrace {
  refreshTracing() {
    // Records batched for the sinks go to the listeners that were there when they happened.
    if (this.traceBatched) this.drainTrace()
    this.spanRunner = findSpanRunner([this.runtimeListeners, this.local])
    const listened = this.runtimeListeners.trace.length > 0 || this.local.trace.length > 0
    this.trace.refresh(this.drainTraceNow)
    // Content (prompts, outputs, Tool input…) is recorded only while some consumer consents.
    const content = this.trace.consenting || this.recorderContent
    this.traceBatched = listened && !this.trace.listening
    // A run recorder alone makes records too, but takes them inside the engine: nothing to
    // drain or flush from here (aml_engine::TraceTap).
    this.tracing = listened || this.recorders.length > 0
    if (listened !== this.traceListened || content !== this.traceContent) {
      this.traceListened = listened
      this.traceContent = content
      this.native.setTracing(listened, content)
    }
  }

  /** Feeds `recorder` (lib/studio/recorder.js), whose tap the engine now holds, from here on. */
  addRecorder(recorder, content) {
    this.recorders.push(recorder)
    if (content) this.recorderContent = true
    this.refreshTracing()
  }

  /**
   * Delivers pending trace records. Listeners get them at once; while only record sinks
   * listen (trace-sink.js) they wait for the batch: TRACE_BATCH_STEPS calls, or the end of
   * this event-loop turn, whichever comes first.
   */
  flushTrace() {
    if (!this.traceListened) return
    if (this.traceBatched && --this.traceCredit > 0) {
      if (this.traceImmediate === undefined) this.traceImmediate = setImmediate(this.drainTraceNow)
      return
    }
    this.drainTrace()
  }

  /** Delivers every pending trace record now (also the batched ones). */
  drainTrace() {
    this.traceCredit = TRACE_BATCH_STEPS
    if (this.traceImmediate !== undefined) {
      clearImmediate(this.traceImmediate)
      this.traceImmediate = undefined
    }
    // A batch timer of a run that has ended finds the native domain freed: nothing is pending.
    if (this.disposed) return
    if (this.traceBatched) {
      const batch = this.native.drainTraceBatch(this.trace.content)
      if (batch !== null) this.trace.dispatchBatch(batch)
      return
    }
    const json = this.native.drainTrace()
    if (json !== "[]") this.trace.dispatchRecords(JSON.parse(json))
  }

  /** Opens a driver-owned span; returns its id. */
  openSpan(kind, name, parentSpanId, { attributes, resource = false, sensitive } = {}) {
    const id = this.native.openSpan(
      kind,
      name,
      parentSpanId,
      resource,
      attributesJson(attributes),
      this.traceContent ? attributesJson(sensitive) : undefined,
    )
    if (this.tracing) this.flushTrace()
    return id
  }

  /** Closes a driver-owned span, with status error when `failed` is true. */
  closeSpan(spanId, failed, error, attributes, sensitive) {
    let type
    let message
    if (failed) ({ type, message } = describeError(error))
    this.native.closeSpan(
      spanId,
      type,
      message,
      attributesJson(attributes),
      this.traceContent ? attributesJson(sensitive) : undefined,
    )
    if (this.tracing) this.flushTrace()
  }

  point(spanId, parentSpanId, name, attributes, sensitive) {
    if (!this.tracing) return
    this.native.point(spanId, parentSpanId, name, attributesJson(attributes), this.traceContent ? attributesJson(sensitive) : undefined)
    this.flushTrace()
  }

  /** Several point events (`[spanId, name, attributes, sensitive]`) with one trace drain. */
  points(list) {
    if (!this.tracing) return
    for (const [spanId, name, attributes, sensitive] of list) {
      const content = this.traceContent ? attributesJson(sensitive) : undefined
      this.native.point(spanId, undefined, name, attributesJson(attributes), content)
    }
    this.flushTrace()
  }
}
