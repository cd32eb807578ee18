// One provider call of a ready Agent (INVENTORY AG-1, LIM-2): the frozen execution context,
// the masked call itself, its failure wrapping and the response text. Shared by the plain
// Agent path (lib/agents/run.js) and the journaled one (lib/journal/agent.js).

import { setMaxListeners } from "node:events"

import { attachObservability } from "./services.js"
import { masked, storage } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { inSpan } from "../observability/span-runner.js"

function callProvider(provider, request, context) {
  return provider.run.call(provider.target, request, context)
}

export function readText(response, label) {
  if (typeof response !== "object" || response === null) {
    throw new EvaluationError(`${label} returned an invalid response`)
  }
  let text
  try {
    text = response.text
  } catch (cause) {
    throw new EvaluationError(`${label} returned an invalid response`, { cause })
  }
  if (typeof text !== "string") throw new EvaluationError(`${label} returned an invalid response`)
  return text
}

/**
 * `{ events, signal, trace }` as a literal makes it (same keys, order and prototype:
 * Object.prototype), but with in-object room for the observability stamp's private fields
 * (services.js), which a literal would keep in a separate property array: one allocation
 * less per Agent call, and 16 bytes less while a provider holds the context.
 */
function PlainContext(events, signal, trace) {
  this.events = events
  this.signal = signal
  this.trace = trace
}
PlainContext.prototype = Object.prototype

/** The frozen AgentExecutionContext of one Agent call. */
export function createExecutionContext(domain, trace, sandbox) {
  if (!domain.abortable && !domain.signalShared) {
    // AML's own signal (the caller passed none) goes to every concurrent provider call of
    // the run, and each may listen to it: Node's warning past 10 listeners would only be
    // noise for a fan-out. Lifted once per evaluation, on its first Agent call.
    setMaxListeners(0, domain.signal)
    domain.signalShared = true
  }
  const context =
    sandbox === undefined
      ? new PlainContext(domain.events, domain.signal, trace)
      : { events: domain.events, sandbox, signal: domain.signal, trace }
  attachObservability(context, domain, trace.spanId)
  Object.freeze(context)
  return context
}

/**
 * The provider call; its failures wrap as `${label} failed` (INVENTORY AG-1), a rejection
 * with the caller's abort reason (LIM-2) too (see providerFailure). A provider that ignores
 * the abort and answers anyway does not make the Agent succeed: once it settled, the task
 * fails with the reason (no provider failure to wrap).
 */
export async function callAgentProvider(domain, local, provider, request, context, label) {
  let response
  try {
    response = await startProvider(domain, provider, request, context)
  } catch (error) {
    throw providerFailure(domain, local, error, label)
  }
  if (domain.signal.aborted) throw domain.signal.reason
  return response
}

/** A provider's answer other than a native promise is adopted the way an async function would. */
async function adopt(value) {
  return value
}

/**
 * The failure path of one provider call (AG-1, LIM-1): a started provider's rejection wraps
 * as `${label} failed` with the rejection as cause, the caller's abort reason included, so
 * the caller learns which Agent was cancelled. Only a call AML abandoned after the abort
 * grace period (it never settled, so it did not fail) gives the reason itself outside
 * component-local evaluate().
 */
export function providerFailure(domain, local, error, label) {
  if (domain.abandonedProviders && !local && error === domain.signal.reason) return error
  return new EvaluationError(`${label} failed`, { cause: error })
}

/**
 * Starts the provider call with component evaluation masked and returns a native promise of
 * its response. A synchronous throw becomes a rejection; a native promise is used as is, so
 * the common path costs one reaction instead of an async wrapper chain (each promise also
 * runs the AsyncLocalStorage hooks on Node 20); any other value is adopted like an async
 * function's return value, inside the mask, so a custom thenable's `then` runs masked.
 */
export function startProvider(domain, provider, request, context) {
  let result
  try {
    result =
      domain.spanRunner === undefined
        ? masked(callProvider, provider, request, context)
        : inSpan(domain, request.trace.spanId, () => masked(callProvider, provider, request, context))
  } catch (error) {
    return Promise.reject(error)
  }
  const running = result instanceof Promise ? result : masked(adopt, result)
  return domain.awaitProvider(running)
}

/**
 * `startProvider(…).then(fulfilled, rejected)` with the reaction attached while component
 * evaluation is masked, so the handlers run masked too: reading the response's `text` then
 * needs no second masking (each AsyncLocalStorage run costs on the Agent hot path).
 */
export function startProviderThen(domain, provider, request, context, fulfilled, rejected) {
  if (storage.getStore() === undefined) return startProvider(domain, provider, request, context).then(fulfilled, rejected)
  return storage.run(undefined, chainProvider, domain, provider, request, context, fulfilled, rejected)
}

function chainProvider(domain, provider, request, context, fulfilled, rejected) {
  return startProvider(domain, provider, request, context).then(fulfilled, rejected)
}
