// The record-sink protocol: a trace listener may carry a function under TRACE_SINK that
// consumes the engine's trace records directly instead of AML's public event objects.
// createOpenTelemetryTracer() is the one user. While every trace listener of an evaluation
// is a sink, the runtime builds no event objects and drains the engine in batches
// (domain.js): once per event-loop turn or every TRACE_BATCH_STEPS trace-producing steps,
// right after the root span opens, when the root span closes, and whenever the sink asks.
//
// `sink(runId, record, control)` is called once per record, in sequence order, with
// component evaluation masked. A record is a compact array (read from the engine's batch by
// trace-batch.js; the public events' `sequence` and `timestamp` are left out):
//   start `[0, spanId, parentSpanId | null, kind, name, at, attributes, sensitive?]`
//   end   `[1, spanId, kind, failed, durationMs, attributes, sensitive?]`
//   event `[2, spanId, name, at, attributes, sensitive?]`
// It is the batch's own decoded array: the sink may keep its attribute objects but must not
// mutate them. `sensitive` is present only for a listener whose `captureContent` is true
// (AML's consent rules). `at + control.clockOffset` is the record's epoch time in
// milliseconds with sub-millisecond precision: the performance timeline, anchored to
// `Date.now()` when the evaluation's sinks were set up (traceClockOffset), as the OTel SDK
// anchors the spans it times itself.
// `control.flush()` delivers every pending record of the evaluation at once (synchronously,
// to every sink), for a sink that must know a span's start before the next batch.

import { traceClock } from "../core/native.js"
import { wallClockDrift } from "./wall-clock.js"

export const TRACE_SINK = Symbol.for("@aml-jsx/sdk/trace-record-sink")

/** Trace-producing steps between two drains while only sinks listen. */
export const TRACE_BATCH_STEPS = 128

let offset

/**
 * The epoch time of the engine's trace clock 0, as `Date.now()` reads it now: the engine's
 * clock is calibrated against the performance timeline once per process (both are monotonic,
 * so one calibration holds; its error is one native call), and the wall clock's drift from
 * that timeline is checked anew for each caller (each evaluation's sinks; wall-clock.js), so
 * AML's spans sit on the clock the SDK times its own spans on.
 */
export function traceClockOffset() {
  if (offset === undefined) {
    const before = performance.now()
    const engine = traceClock()
    const after = performance.now()
    offset = performance.timeOrigin + (before + after) / 2 - engine
  }
  return offset + wallClockDrift()
}
