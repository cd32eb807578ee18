// Context (INVENTORY CTX-1, CTX-2; a draft API the SDK ships): createContext, useContext and
// <X.Provider value>. A Provider is a transparent lexical wrapper — no span, no depth, same
// channel — that binds `value` (by identity, never cloned) for its subtree through the
// lexical environment (env.js). The registry is realm-wide so contexts work across copies.

import { storage } from "./scope-storage.js"
import { EvaluationError } from "../errors/errors.js"
import { PRIMITIVE_KIND } from "./node.js"
import { isNormalized } from "../checks/normalized.js"
import { realmSingleton } from "./realm.js"

const registry = realmSingleton(
  "@aml-jsx/sdk/context-registry",
  () => Object.freeze({ contexts: new WeakMap(), providers: new WeakMap() }),
  (value) =>
    typeof value === "object" &&
    value !== null &&
    value.contexts instanceof WeakMap &&
    value.providers instanceof WeakMap,
  "AML Context registry has an invalid global value",
)

export function createContext(name, ...rest) {
  if (!isNormalized(name)) throw new TypeError("Context name must be a non-empty normalized string")
  // A second argument — even an explicit undefined — makes the context "defaulted". The
  // entry is read by whichever copy's runtime evaluates it, so it holds plain data (a
  // boolean, not a module-private sentinel another copy could not recognise).
  const hasDefault = rest.length > 0
  const defaultValue = hasDefault ? rest[0] : undefined
  const label = `${name}.Provider`
  const Provider = {
    [label]() {
      throw new Error(`<${label}> can only be evaluated by AmlRuntime`)
    },
  }[label]
  Object.defineProperty(Provider, PRIMITIVE_KIND, { value: "context" })
  const context = Object.freeze({ name, Provider })
  registry.contexts.set(context, { defaultValue, hasDefault, name })
  registry.providers.set(Provider, context)
  return context
}

/**
 * Enters a `<X.Provider value>` node; returns the environment of its subtree. Called by the
 * primitive protocol with the environment in effect around the node.
 */
export function enterContextProvider(node, env) {
  const context = registry.providers.get(node.type)
  if (context === undefined) throw new EvaluationError("AML encountered an unregistered Context Provider")
  const props = node.props
  if (!Object.prototype.hasOwnProperty.call(props, "value")) {
    throw new EvaluationError(`<${context.name}.Provider> requires a value prop`)
  }
  return env.withBinding(context, props.value)
}

/** Reads `context` in the environment `env` (the calling component's). */
export function readContext(context, env) {
  const entry = registry.contexts.get(context)
  if (entry === undefined) throw new TypeError("useContext() requires a Context returned by createContext()")
  const binding = env.lookup(context)
  if (binding !== undefined) return binding.value
  if (entry.hasDefault === true) return entry.defaultValue
  throw new EvaluationError(`Context "${entry.name}" has no Provider or default value`)
}

export function useContext(context) {
  const scope = storage.getStore()
  if (scope === undefined || scope === null || typeof scope.useContext !== "function") {
    throw new EvaluationError("useContext() is only available while an AML component is active")
  }
  return scope.useContext(context)
}
