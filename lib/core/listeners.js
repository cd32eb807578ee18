// Listener registries for "start", "finish" and "trace" (INVENTORY §2.1). The runtime has
// one that sees every evaluation; each evaluation has a local one (exposed to providers as
// AgentExecutionContext.events) that closes when the evaluation finishes.

import { SPAN_RUNNER } from "../observability/span-runner.js"
import { TRACE_SINK } from "../observability/trace-sink.js"

const NAMES = new Set(["finish", "start", "trace"])

/**
 * A trace listener's hook under `key` (SPAN_RUNNER, TRACE_SINK), read once at registration;
 * a throwing or non-function property counts as none.
 */
function readHook(listener, key) {
  try {
    const hook = listener[key]
    return typeof hook === "function" ? hook : undefined
  } catch {
    return undefined
  }
}

function readCaptureContent(listener) {
  let capture
  try {
    capture = listener.captureContent
  } catch (cause) {
    throw new TypeError("trace listener captureContent could not be read", { cause })
  }
  if (capture !== undefined && typeof capture !== "boolean") {
    throw new TypeError("trace listener captureContent must be a boolean")
  }
  return capture === true
}

export class ListenerRegistry {
  constructor(onChange) {
    this.start = []
    this.finish = []
    this.trace = []
    this.closed = false
    this.onChange = onChange
  }

  add(name, listener, once) {
    if (this.closed) throw new Error("AML evaluation event scope is closed")
    if (!NAMES.has(name)) throw new TypeError(`Unknown AML event "${String(name)}"`)
    if (typeof listener !== "function") throw new TypeError("AML event listener must be a function")
    const entry = {
      captureContent: name === "trace" ? readCaptureContent(listener) : false,
      listener,
      once,
      spanRunner: name === "trace" ? readHook(listener, SPAN_RUNNER) : undefined,
      // A record sink (trace-sink.js); a `once` listener gets one event, so it stays a listener.
      sink: name === "trace" && !once ? readHook(listener, TRACE_SINK) : undefined,
    }
    this[name] = [...this[name], entry]
    this.onChange?.()
    return () => this.remove(name, entry)
  }

  remove(name, entry) {
    const list = this[name]
    const index = list.indexOf(entry)
    if (index < 0) return
    this[name] = list.filter((candidate) => candidate !== entry)
    this.onChange?.()
  }

  /** The entries to call for one dispatch; `once` entries are removed before the call. */
  take(name) {
    const list = this[name]
    if (list.length === 0) return list
    if (list.some((entry) => entry.once)) {
      this[name] = list.filter((entry) => !entry.once)
      this.onChange?.()
    }
    return list
  }

  /** The subscribe-only view handed to providers. */
  subscriber() {
    return Object.freeze({
      on: (name, listener) => this.add(name, listener, false),
      once: (name, listener) => this.add(name, listener, true),
    })
  }
}
