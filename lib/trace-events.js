// Turns engine trace records into the public, deeply frozen AmlTraceEvent objects and
// dispatches them (INVENTORY §2.1, §2.5). Trace listeners are isolated: each is started
// synchronously, nothing is awaited, and failures go to onTraceError or one stderr line.

import { masked } from "./component-scope.js"
import { callAdopting } from "./thenable.js"

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
  }

  dispatchRecords(records) {
    for (const record of records) this.dispatch(record)
  }

  dispatch(record) {
    const entries = []
    let wantsContent = false
    for (const registry of this.registries) {
      for (const entry of registry.take("trace")) {
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
