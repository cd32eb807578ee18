// The state of one Agent's provider call on the plain path (lib/agents/run.js) while it is in
// flight: what the settle reaction on the provider's promise needs, in one object whose
// methods are that reaction (bound, no closure context). A wide fan-out keeps one per
// in-flight Agent, so each field counts (issue 26 §3): the failure label is the object itself
// (`${call}` is `Agent "<provider>" (<spanId>)`, built only when a message needs it) and the
// Tool lease exists only when Tools were granted.

import { providerFailure, readText } from "./call.js"
import { failDirect, finishDirect } from "./direct.js"
import { masked } from "../core/component-scope.js"
import { reportUsage } from "./usage.js"

/** The provider call of `call` settled: its Tools close and its concurrency slot is free. */
function callEnded(domain, call) {
  if (call.lease !== undefined) call.lease.open = false
  domain.releaseAgentSlot()
}

/** An Agent the generic driver runs (runAgent): the reaction resolves with the engine's next step code. */
export class AgentCall {
  constructor(domain, task, provider, spanId, lease, local) {
    this.domain = domain
    this.task = task
    this.provider = provider
    this.spanId = spanId
    /** `{ open }` of the granted Tools (lib/tools/instrumentation.js), or undefined: none. */
    this.lease = lease
    /** Whether the task is a component-local evaluate() task (providerFailure). */
    this.local = local
  }

  toString() {
    return `Agent "${this.provider.name}" (${this.spanId})`
  }

  fulfilled(response) {
    const domain = this.domain
    const aborted = domain.abortable && domain.signal.aborted
    callEnded(domain, this)
    if (aborted) throw domain.signal.reason
    return finishText(domain, this.task, response, this)
  }

  rejected(error) {
    const domain = this.domain
    const failure = providerFailure(domain, this.local, error, this)
    callEnded(domain, this)
    throw failure
  }
}

/**
 * A text-only Agent a component started with evaluate() on the one-call path
 * (lib/agents/direct.js), made by EvaluationDomain.evaluateLocal before the task is entered.
 * The reaction resolves with the task's text and does the caller's bookkeeping (`settled`):
 * `running` is the promise the caller got, `order` its start order in the component,
 * `owner` the run that marked the task local (only it clears the mark). Its provider is the
 * runtime's (runTextAgent), and the task is always component-local.
 */
export class DirectAgentCall {
  constructor(scope, task, owner, order) {
    this.scope = scope
    this.task = task
    this.owner = owner
    this.order = order
    this.running = undefined
    /** Set by runPlanned once the engine planned the Agent. */
    this.spanId = undefined
    this.lease = undefined
  }

  toString() {
    return `Agent "${this.scope.domain.options.agentProvider.name}" (${this.spanId})`
  }

  fulfilled(response) {
    const domain = this.scope.domain
    const aborted = domain.abortable && domain.signal.aborted
    callEnded(domain, this)
    let text
    try {
      if (aborted) throw domain.signal.reason
      text = finishDirectText(domain, this.task, response, this)
    } catch (error) {
      throw failedDirect(domain, this.task, error, this)
    }
    this.settled(false)
    return text
  }

  rejected(error) {
    const domain = this.scope.domain
    const failure = providerFailure(domain, true, error, this)
    callEnded(domain, this)
    throw failedDirect(domain, this.task, failure, this)
  }

  /** The caller's bookkeeping once the task settled (a failure: `error`). */
  settled(failed, error) {
    const scope = this.scope
    const domain = scope.domain
    const running = this.running
    if (--scope.direct === 0) domain.directScopes.delete(scope)
    const local = domain.localTasks
    if (local[this.task] === this.owner) local[this.task] = 0
    if (failed) scope.nestedFailed(running, error, this.order)
    else scope.pending.delete(running)
  }
}

/** The direct task failed with `error`: its spans close, the caller's bookkeeping runs; rethrown. */
export function failedDirect(domain, task, error, call) {
  failDirect(domain, task, error)
  call.settled(true, error)
  return error
}

/** The one-call path's result: the task's text (lib/agents/direct.js). */
export function finishDirectText(domain, task, response, label) {
  const text = masked(readText, response, label)
  const usage = reportUsage(domain, task, response, label)
  // Only in a recording-only journaled evaluation (lib/journal/session.js): the step is
  // recorded with its usage (issue 37), which the engine's lean entry cannot hold.
  if (usage !== undefined) domain.journal.recordOwnStep(task, { text, usage })
  return finishDirect(domain, task, text, domain.traceContent ? text : "")
}

export function finishText(domain, task, response, label) {
  // The response's `text` getter is user code: it runs with component evaluation masked.
  const text = masked(readText, response, label)
  reportUsage(domain, task, response, label)
  // The output attribute is sensitive trace content: only sent while a listener consents.
  return domain.native.agentDone(task, text, domain.traceContent ? text : "")
}
