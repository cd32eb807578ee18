// Recording the common journaled Agent (docs/JOURNAL.md): plain text, no structured output,
// no Skills to stage, no Loop state Tool. Its provider call is the plain Agent path's (one
// reaction on the provider's promise, attached masked: startProviderThen in agent-call.js),
// and its answer is appended to the journal in that reaction, before the Agent completes.
// Everything else is recorded by runJournaledAgent (journal-agent.js).

import { createExecutionContext, providerFailure, readText, startProviderThen } from "./agent-call.js"
import { masked } from "./component-scope.js"

/**
 * Runs the ready Agent on top of `task` (its budget already reserved) and records its text
 * at `key` with `digest`. Resolves with the engine's next step code.
 */
export function recordTextAgent(domain, task, entry, request, label, lease, key, digest) {
  const context = createExecutionContext(domain, request.trace, entry.sandbox)
  const local = domain.localTasks[task] > 0
  const fulfilled = (response) => {
    const aborted = domain.signal.aborted
    lease.open = false
    domain.releaseAgentSlot()
    if (aborted) throw domain.signal.reason
    const text = masked(readText, response, label)
    const output = domain.tracing ? text : ""
    const pending = domain.journal.record(key, "agent", digest, { text })
    // A journal whose append returns a promise is durable before the Agent completes.
    return pending === undefined ? domain.native.agentDone(task, text, output) : pending.then(() => domain.native.agentDone(task, text, output))
  }
  const rejected = (error) => {
    const failure = providerFailure(domain, local, error, label)
    lease.open = false
    domain.releaseAgentSlot()
    throw failure
  }
  const start = () => startProviderThen(domain, entry.provider, request, context, fulfilled, rejected)
  const waiting = domain.agentSlot(task, label)
  return waiting === undefined ? start() : waiting.then(start)
}
