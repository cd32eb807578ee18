// Component-local `evaluate()` (RT-2). While a function component runs, the realm-shared
// AsyncLocalStorage holds its ComponentScope. The scope is the cross-copy protocol: any SDK
// copy's `evaluate()` finds it and calls `scope.evaluate(value, schema)`, so the copy that
// owns the evaluation domain does the work.

import { EvaluationError, ONLY_ACTIVE, TOOLS_ONLY_ACTIVE } from "../errors/errors.js"
import { readContext } from "./context.js"
import { storage } from "./scope-storage.js"

export { masked, storage } from "./scope-storage.js"

/** The public `evaluate(value, schema?)` export. */
export function evaluate(value, schema) {
  const scope = storage.getStore()
  if (scope === undefined || scope === null || typeof scope.evaluate !== "function") {
    throw new EvaluationError(ONLY_ACTIVE)
  }
  return arguments.length > 1 ? scope.evaluate(value, schema) : scope.evaluate(value)
}

/**
 * One invocation of one function component. `active` is true from the call until AML
 * observes the returned value settle; nested evaluations started meanwhile are joined
 * before the component's result is used.
 */
export class ComponentScope {
  constructor(domain, task, env) {
    this.domain = domain
    this.task = task
    /** The lexical environment of the invocation (Context bindings, Sandbox…). */
    this.env = env
    this.active = true
    this.pending = null
    /** Nested work that failed after the caller's abort, in start order (joinNested). */
    this.cancelled = null
    this.started = 0
    /** One-call Agents in flight (EvaluationDomain.evaluateLocal, directScopes). */
    this.direct = 0
    /** The returned value's `then`, read once inside the boundary (undefined: not read). */
    this.then = undefined
    this.thenRead = false
  }

  evaluate(value, schema) {
    if (!this.active || this.domain.closed) throw new EvaluationError(ONLY_ACTIVE)
    if (schema !== undefined) return this.track(this.domain.evaluateStructured(this, value, schema))
    return this.domain.evaluateLocal(this, value)
  }

  /** Context lookup for useContext() (lib/core/context.js), with this invocation's bindings. */
  useContext(context) {
    if (!this.active || this.domain.closed) {
      throw new EvaluationError("useContext() is only available while an AML component is active")
    }
    return readContext(context, this.env)
  }

  /** A callable Tool (lib/tools/tool.js) invoked by this component; joined like nested work. */
  callTool(port, input) {
    if (!this.active || this.domain.closed) throw new EvaluationError(TOOLS_ONLY_ACTIVE)
    return this.track(this.domain.callTool(this.task, port, input))
  }

  /**
   * `pending` maps each unsettled nested promise to the promise its caller got. The caller's
   * own promise means a failure it never observes, and that settled before the component
   * did (so no join takes it over), is the caller's unhandled rejection, as for any dropped
   * promise: never silently lost.
   */
  track(promise) {
    const pending = (this.pending ??= new Map())
    const caller = promise.then()
    pending.set(promise, caller)
    const order = this.started++
    // Registered before the caller can attach its own handlers, so a nested evaluation the
    // component awaited and caught is no longer pending when the component settles.
    promise.then(
      () => pending.delete(promise),
      (error) => this.nestedFailed(promise, error, order),
    )
    return caller
  }

  /** A nested evaluation or Tool call started `order`-th failed with `error`. */
  nestedFailed(promise, error, order) {
    this.pending.delete(promise)
    if (this.domain.signal.aborted) (this.cancelled ??= []).push({ error, order })
  }
}

const ignore = () => {}

/** The join takes over the still-pending nested work: their failures are reported by it. */
export function takeOver(pending) {
  const promises = []
  for (const [promise, caller] of pending) {
    caller.then(undefined, ignore)
    promises.push(promise)
  }
  return promises
}

/**
 * Waits for the nested evaluations still pending when the component settled, then yields
 * the component outcome (INVENTORY RT-2 join semantics). Returns `value` synchronously when
 * nothing is pending.
 */
export function joinNested(scope, failed, error, value) {
  const pending = scope.pending
  if (failed && scope.cancelled !== null) return joinCancelled(scope, error)
  if (pending === null || pending.size === 0) {
    if (failed) throw error
    return value
  }
  return Promise.allSettled(takeOver(pending)).then((results) => {
    if (failed && scope.cancelled !== null) return joinCancelled(scope, error)
    const errors = []
    for (const result of results) if (result.status === "rejected") errors.push(result.reason)
    if (failed) {
      if (errors.length > 0) {
        throw new AggregateError([error, ...errors], "AML component and concurrent nested evaluations failed")
      }
      throw error
    }
    if (errors.length === 1) throw errors[0]
    if (errors.length > 1) throw new AggregateError(errors, "AML component nested evaluations failed")
    return value
  })
}

/**
 * A component that failed after the caller's abort (LIM-2): its nested work stops at its next
 * await, and the errors it stopped with (the Agent cancellation wrappers, each caused by the
 * reason) are the outcome, in the order the nested evaluations started. The component's own
 * error comes first unless it is one of them (a Promise.all rethrowing one).
 */
function joinCancelled(scope, error) {
  const pending = scope.pending
  if (pending !== null && pending.size > 0) {
    return Promise.allSettled(takeOver(pending)).then(() => joinCancelled(scope, error))
  }
  // The bare reason says nothing the Agent wrappers (caused by it) do not.
  const reason = scope.domain.signal.reason
  const nested = scope.cancelled
    .sort((a, b) => a.order - b.order)
    .map((entry) => entry.error)
    .filter((nestedError) => nestedError !== reason)
  if (nested.length === 0) throw error
  const errors = error === reason || nested.includes(error) ? nested : [error, ...nested]
  if (errors.length === 1) throw errors[0]
  throw new AggregateError(errors, "AML component and concurrent nested evaluations failed")
}
