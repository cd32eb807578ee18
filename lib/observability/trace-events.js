// Turns engine trace records into the public, deeply frozen AmlTraceEvent objects and
// dispatches them (INVENTORY §2.1, §2.5). Trace listeners are isolated: each is started
// synchronously, nothing is awaited, and failures go to onTraceError or one stderr line.
// Record sinks (trace-sink.js) get the records themselves, after the listeners of each batch.

import { masked } from "../core/component-scope.js"
import { callAdopting } from "../core/thenable.js"
import { TraceBatchReader } from "./trace-batch.js"
import { traceClockOffset } from "./trace-sink.js"

/** Where a compact record's optional `sensitive` element sits, by record type (trace-sink.js). */
const SENSITIVE_AT = [7, 6, 5]

function freezeAttributes(source) {
  const target = Object.create(null)
  for (const key of Object.keys(source)) {
    const value = source[key]
    // Arrays and the one object value, `usage` (issue 37), are frozen with the event.
    target[key] = typeof value === "object" && value !== null ? Object.freeze(value) : value
  }
  return Object.freeze(target)
}

function hasKeys(object) {
  for (const _ in object) return true
  return false
}

function buildEvent(runId, record, attributes) {
  const event = { type: record.type, runId, spanId: record.spanId }
  if (record.parentSpanId !== undefined) event.parentSpanId = record.parentSpanId
  event.sequence = record.sequence
  event.timestamp = record.timestamp
  if (record.type !== "event") event.kind = record.kind
  event.name = record.name
  if (record.type === "span.end") {
    event.status = record.status
    event.durationMs = Math.max(0, record.durationMs)
  }
  event.attributes = attributes
  return Object.freeze(event)
}

export class TraceDispatcher {
  constructor(runId, registries, onTraceError) {
    this.runId = runId
    this.registries = registries
    this.onTraceError = onTraceError
    this.warned = false
    /** Sink entries (trace-sink.js), consenting ones first; refreshed with the listeners. */
    this.sinks = []
    /** Whether some trace listener is not a sink (and so needs event objects). */
    this.listening = false
    /** Whether some sink consents to content (the compact drain then carries `sensitive`). */
    this.content = false
    /** Whether some trace listener, sink or not, captures content (the domain's consent flag). */
    this.consenting = false
    /** The reader of the domain's batched drains, with its string table. */
    this.batches = new TraceBatchReader()
    /** The sinks' `control`: the domain's flush and the trace clock offset. */
    this.control = undefined
  }

  /** Re-reads which trace entries are sinks; `flush` delivers the evaluation's pending records. */
  refresh(flush) {
    const sinks = []
    let listening = false
    let consenting = false
    for (const registry of this.registries) {
      for (const entry of registry.trace) {
        if (entry.captureContent) consenting = true
        if (entry.sink === undefined) listening = true
        else if (entry.captureContent) sinks.unshift(entry)
        else sinks.push(entry)
      }
    }
    this.sinks = sinks
    this.listening = listening
    this.consenting = consenting
    this.content = sinks.length > 0 && sinks[0].captureContent
    if (sinks.length > 0 && this.control === undefined) {
      this.control = Object.freeze({ clockOffset: traceClockOffset(), flush })
    }
  }

  /** Engine records (objects): events for the listeners, then the compact form for the sinks. */
  dispatchRecords(records) {
    if (this.listening) for (const record of records) this.dispatch(record)
    if (this.sinks.length > 0) masked(deliverToSinks, this, records.map(compactRecord))
  }

  /** A batched drain (trace-batch.js) while only sinks listen, with `sensitive` when `this.content`. */
  dispatchBatch(batch) {
    masked(deliverToSinks, this, this.batches.read(batch, this.content))
  }

  dispatch(record) {
    const entries = []
    let wantsContent = false
    for (const registry of this.registries) {
      for (const entry of registry.take("trace")) {
        if (entry.sink !== undefined) continue
        entries.push(entry)
        if (entry.captureContent) wantsContent = true
      }
    }
    if (entries.length === 0) return
    const redacted = buildEvent(this.runId, record, freezeAttributes(record.attributes))
    let content = redacted
    if (wantsContent && hasKeys(record.sensitive)) {
      content = buildEvent(this.runId, record, freezeAttributes({ ...record.attributes, ...record.sensitive }))
    }
    for (const entry of entries) {
      this.call(entry.listener, entry.captureContent ? content : redacted, redacted)
    }
  }

  /**
   * A sink threw at compact `record`: reported like a listener failure, with an event that
   * names the record (type, runId, spanId, kind or name, redacted attributes).
   */
  sinkFailed(error, record) {
    const type = record[0]
    const event = { type: TYPES[type], runId: this.runId, spanId: record[1] }
    if (type === 0) {
      event.kind = record[3]
      event.name = record[4]
    } else if (type === 1) event.kind = record[2]
    else event.name = record[2]
    event.attributes = freezeAttributes(record[SENSITIVE_AT[type] - 1])
    this.failed(error, Object.freeze(event))
  }

  call(listener, event, redacted) {
    try {
      const adopted = masked(callAdopting, listener, event)
      if (adopted !== undefined) adopted.then(undefined, (error) => this.failed(error, redacted))
    } catch (error) {
      this.failed(error, redacted)
    }
  }

  failed(error, event) {
    const handler = this.onTraceError
    if (handler === undefined) {
      if (!this.warned) {
        this.warned = true
        console.error(`[aml] trace listener failed at ${event.type} ${event.spanId}`)
      }
      return
    }
    try {
      const adopted = masked(callAdopting, handler, error, event)
      if (adopted !== undefined) adopted.then(undefined, () => {})
    } catch {
      // onTraceError's own failures are swallowed by contract.
    }
  }
}

const TYPES = ["span.start", "span.end", "event"]

/** An engine record object in the compact form of trace-sink.js (with its sensitive attributes). */
function compactRecord(record) {
  const type = record.type
  if (type === "span.start") {
    return [0, record.spanId, record.parentSpanId ?? null, record.kind, record.name, record.at, record.attributes, record.sensitive]
  }
  if (type === "span.end") {
    const failed = record.status === "error"
    return [1, record.spanId, record.kind, failed, Math.max(0, record.durationMs), record.attributes, record.sensitive]
  }
  return [2, record.spanId, record.name, record.at, record.attributes, record.sensitive]
}

/**
 * Hands each compact record to every sink, in order. Consenting sinks come first and see
 * the sensitive attributes; the record is redacted in place (its `sensitive` element cut)
 * before the first other sink: records are this batch's own arrays, shared with nobody.
 */
function deliverToSinks(dispatcher, records) {
  const { control, runId, sinks } = dispatcher
  for (const record of records) {
    const sensitiveAt = SENSITIVE_AT[record[0]]
    for (const entry of sinks) {
      if (!entry.captureContent && record.length > sensitiveAt) record.length = sensitiveAt
      try {
        entry.sink(runId, record, control)
      } catch (error) {
        dispatcher.sinkFailed(error, record)
      }
    }
  }
}
