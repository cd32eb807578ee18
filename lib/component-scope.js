// Component-local `evaluate()` (RT-2). While a function component runs, the realm-shared
// AsyncLocalStorage holds its ComponentScope. The scope is the cross-copy protocol: any SDK
// copy's `evaluate()` finds it and calls `scope.evaluate(value, schema)`, so the copy that
// owns the evaluation domain does the work.

import { AsyncLocalStorage } from "node:async_hooks"

import { EvaluationError, ONLY_ACTIVE, TOOLS_ONLY_ACTIVE } from "./errors.js"
import { readContext } from "./context.js"
import { realmSingleton } from "./realm.js"

export const storage = realmSingleton(
  "@aml-jsx/sdk/component-evaluation-storage",
  () => new AsyncLocalStorage(),
  (value) => value instanceof AsyncLocalStorage,
  "AML component evaluation storage has an invalid global value",
)

/** Runs `fn` with component evaluation masked (listeners, providers, schema callbacks). */
//
// Not `storage.exit()`: on Node 20 it disables and re-enables the global promise hooks on
// every call, which dominated the Agent hot path. Running with an undefined store masks the
// same way, and when no store is active there is nothing to mask at all.
export function masked(fn, ...args) {
  if (storage.getStore() === undefined) return fn(...args)
  return storage.run(undefined, fn, ...args)
}

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
    /** The returned value's `then`, read once inside the boundary (undefined: not read). */
    this.then = undefined
    this.thenRead = false
  }

  evaluate(value, schema) {
    if (!this.active || this.domain.closed) throw new EvaluationError(ONLY_ACTIVE)
    const promise =
      schema !== undefined
        ? this.domain.evaluateStructured(this, value, schema)
        : this.domain.evaluateNested(this.task, value, this.env)
    return this.track(promise)
  }

  /** Context lookup for useContext() (lib/context.js), with this invocation's bindings. */
  useContext(context) {
    if (!this.active || this.domain.closed) {
      throw new EvaluationError("useContext() is only available while an AML component is active")
    }
    return readContext(context, this.env)
  }

  /** A callable Tool (lib/tool.js) invoked by this component; joined like nested work. */
  callTool(port, input) {
    if (!this.active || this.domain.closed) throw new EvaluationError(TOOLS_ONLY_ACTIVE)
    return this.track(this.domain.callTool(this.task, port, input))
  }

  track(promise) {
    const pending = (this.pending ??= new Set())
    pending.add(promise)
    // Registered before the caller can attach its own handlers, so a nested evaluation the
    // component awaited and caught is no longer pending when the component settles.
    const forget = () => pending.delete(promise)
    promise.then(forget, forget)
    return promise
  }
}

/**
 * Waits for the nested evaluations still pending when the component settled, then yields
 * the component outcome (INVENTORY RT-2 join semantics). Returns `value` synchronously when
 * nothing is pending.
 */
export function joinNested(scope, failed, error, value) {
  const pending = scope.pending
  if (pending === null || pending.size === 0) {
    if (failed) throw error
    return value
  }
  return Promise.allSettled([...pending]).then((results) => {
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
