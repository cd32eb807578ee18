// The JS half of one evaluation domain: the native frame machine, the caller's signal,
// object identities for cycle tracking, the evaluation-local listeners and trace dispatch.

import { randomUUID } from "node:crypto"

import { runTask } from "./driver.js"
import { EvaluationError } from "./errors.js"
import { ListenerRegistry } from "./listeners.js"
import { NativeEvaluation } from "./native.js"
import { PRIMITIVE_KIND } from "./node.js"
import { PRIMITIVE_LABELS } from "./primitives.js"
import { nativeLimits } from "./runtime-options.js"
import { TraceDispatcher } from "./trace-events.js"

export class EvaluationDomain {
  constructor(runtimeListeners, options, signal) {
    this.options = options
    this.signal = signal
    this.runId = randomUUID()
    this.native = new NativeEvaluation(nativeLimits(options.limits), options.allowedTools ?? null, options.system)
    this.closed = false
    this.runtimeListeners = runtimeListeners
    this.local = new ListenerRegistry(() => this.refreshTracing())
    this.trace = new TraceDispatcher(this.runId, [runtimeListeners, this.local], options.onTraceError)
    this.identities = new WeakMap()
    this.nextIdentity = 1
    this.tracing = false
    this.refreshTracing()
  }

  /** A stable small integer per object, so the engine can track cycles by identity. */
  identity(object) {
    let id = this.identities.get(object)
    if (id === undefined) {
      id = this.nextIdentity++
      this.identities.set(object, id)
    }
    return id
  }

  refreshTracing() {
    const tracing = this.runtimeListeners.trace.length > 0 || this.local.trace.length > 0
    if (tracing !== this.tracing) {
      this.tracing = tracing
      this.native.setTracing(tracing)
    }
  }

  flushTrace() {
    const json = this.native.drainTrace()
    if (json !== "[]") this.trace.dispatchRecords(JSON.parse(json))
  }

  evaluateRoot(value) {
    return runTask(this, this.native.newTask(null), value)
  }

  evaluateNested(parentTask, value) {
    // After an abort the parent task may already have failed (its await rejected with the
    // reason while the component kept running): reject like any frame would, without
    // asking the engine for a child of a dead task.
    if (this.signal.aborted) return Promise.reject(this.signal.reason)
    return runTask(this, this.native.newTask(parentTask), value)
  }

  evaluateStructured() {
    return Promise.reject(
      new EvaluationError("Structured evaluate() requires <Agent>, which this build does not implement yet"),
    )
  }

  /** Built-in primitives arrive with later capabilities; until then they fail clearly. */
  primitive(_task, node) {
    const label = PRIMITIVE_LABELS[node.type[PRIMITIVE_KIND]]
    throw new EvaluationError(`<${label}> is not implemented by this build of @aml-jsx/sdk yet`)
  }

  close() {
    this.closed = true
    this.local.closed = true
  }
}
