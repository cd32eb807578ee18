// Turns engine trace records into the public, deeply frozen AmlTraceEvent objects and
// dispatches them (INVENTORY §2.1, §2.5). Trace listeners are isolated: each is started
// synchronously, nothing is awaited, and failures go to onTraceError or one stderr line.
// Record sinks (trace-sink.js) get the records themselves, after the listeners of each batch.

import { masked } from "./component-scope.js"
import { callAdopting } from "./thenable.js"
import { traceClockOffset } from "./trace-sink.js"

const NOTHING = Object.freeze(Object.create(null))

function freezeAttributes(source) {
  const target = Object.create(null)
  for (const key of Object.keys(source)) {
    const value = source[key]
    target[key] = Array.isArray(value) ? Object.freeze(value) : value
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
    /** The sinks' `control`: the domain's flush and the trace clock offset. */
    this.control = undefined
  }

  /** Re-reads which trace entries are sinks; `flush` delivers the evaluation's pending records. */
  refresh(flush) {
    const sinks = []
    let listening = false
    for (const registry of this.registries) {
      for (const entry of registry.trace) {
        if (entry.sink === undefined) listening = true
        else if (entry.captureContent) sinks.unshift(entry)
        else sinks.push(entry)
      }
    }
    this.sinks = sinks
    this.listening = listening
    if (sinks.length > 0 && this.control === undefined) {
      this.control = Object.freeze({ clockOffset: traceClockOffset(), flush })
    }
  }

  dispatchRecords(records) {
    if (this.listening) for (const record of records) this.dispatch(record)
    if (this.sinks.length > 0) masked(deliverToSinks, this, records)
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

  /** A sink threw at `record`: reported like a listener failure, with the redacted event. */
  sinkFailed(error, record) {
    const attributes = freezeAttributes(record.attributes)
    this.failed(error, buildEvent(this.runId, record, attributes))
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

/**
 * Hands each record to every sink, in order. Consenting sinks come first and see the
 * sensitive attributes; the record is redacted in place before the first other sink
 * (records are this batch's own parsed objects, shared with nobody).
 */
function deliverToSinks(dispatcher, records) {
  const { control, runId, sinks } = dispatcher
  for (const record of records) {
    for (const entry of sinks) {
      if (!entry.captureContent && record.sensitive !== NOTHING) record.sensitive = NOTHING
      try {
        entry.sink(runId, record, control)
      } catch (error) {
        dispatcher.sinkFailed(error, record)
      }
    }
  }
}
