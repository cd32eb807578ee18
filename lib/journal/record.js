// Recording the common journaled Agent (docs/JOURNAL.md): plain text, no structured output,
// no Skills to stage, no Loop state Tool. Its provider call is the plain Agent path's (one
// reaction on the provider's promise, attached masked: startProviderThen in lib/agents/call.js),
// and its answer is appended to the journal in that reaction, before the Agent completes and
// before its concurrency slot is released (so a queued Agent starts only once it is durable).
// On the one-call path (lib/agents/direct.js) the reaction also lands the text and finishes the
// task, as the plain path's does, so recording adds no promise of its own there; with a
// built-in memory journal, landing and recording are one engine call (the answer stays
// native: JournalIndex.recordFinishText).
// Everything else is recorded by runJournaledAgent (lib/journal/agent.js).

import { reportUsage } from "../agents/usage.js"
import { failDirect, finishDirect, landedDirect } from "../agents/direct.js"
import { createExecutionContext, providerFailure, readText, startProviderThen } from "../agents/call.js"
import { masked } from "../core/component-scope.js"

/** The one-call path's failure: the task fails, the caller's bookkeeping runs, rethrown. */
function failedText(domain, task, error, settled) {
  failDirect(domain, task, error)
  settled(true, error)
  return error
}

/** Lands a direct task's recorded `text` (the task completes); its text, or a failure. */
function finishText(domain, task, text, settled) {
  try {
    finishDirect(domain, task, text, domain.traceContent ? text : "")
  } catch (error) {
    throw failedText(domain, task, error, settled)
  }
  settled(false)
  return text
}

/**
 * Runs the ready Agent on top of `task` (its budget already reserved) and records its text
 * with the key and digest its lookup left in the engine (JournalSession.recordText). Resolves with the engine's next step code, or for the one-call
 * path (`direct`: runTextAgent's `settled` callback, else false) with the task's text.
 */
export function recordTextAgent(domain, task, entry, request, label, lease, direct) {
  const context = createExecutionContext(domain, request.trace, entry.sandbox)
  const local = domain.localTasks[task] > 0
  const fulfilled = (response) => {
    const aborted = domain.signal.aborted
    lease.open = false
    const session = domain.journal
    let text
    let pending
    let landed = false
    try {
      if (aborted) throw domain.signal.reason
      text = masked(readText, response, label)
      const usage = reportUsage(domain, task, response, label)
      if (usage !== undefined) {
        // A step with usage is recorded with it (issue 37), so a resumed run counts it
        // against maxTokens; the lean text entry has no room for it.
        const [key, digest] = session.stepIdentity(task)
        pending = session.record(key, "agent", digest, { text, usage })
      } else if (direct !== false && session.recorder !== undefined) {
        // A built-in memory journal: landed and recorded natively in one engine call.
        landedDirect(domain, task, session.recorder.recordFinishText(domain.native.id, task, text, domain.tracing))
        landed = true
      } else {
        pending = session.recordText(task, text)
      }
    } catch (error) {
      domain.releaseAgentSlot()
      throw direct === false ? error : failedText(domain, task, error, direct)
    }
    if (pending === undefined) {
      domain.releaseAgentSlot()
    } else {
      // The slot is this step's until its record is durable: a queued Agent starting before
      // would run on while the record is still in flight (a worker killed then re-runs it).
      pending = pending.then(
        () => domain.releaseAgentSlot(),
        (error) => {
          domain.releaseAgentSlot()
          throw error
        },
      )
    }
    if (landed) {
      direct(false)
      return text
    }
    if (direct !== false) {
      // A journal whose append returns a promise is durable before the Agent completes.
      if (pending === undefined) return finishText(domain, task, text, direct)
      return pending.then(
        () => finishText(domain, task, text, direct),
        (error) => {
          throw failedText(domain, task, error, direct)
        },
      )
    }
    const output = domain.traceContent ? text : ""
    return pending === undefined ? domain.native.agentDone(task, text, output) : pending.then(() => domain.native.agentDone(task, text, output))
  }
  const rejected = (error) => {
    const failure = providerFailure(domain, local, error, label)
    lease.open = false
    domain.releaseAgentSlot()
    throw direct === false ? failure : failedText(domain, task, failure, direct)
  }
  const start = () => startProviderThen(domain, entry.provider, request, context, fulfilled, rejected)
  const waiting = domain.agentSlot(task, label)
  if (waiting === undefined) return start()
  // A queued Agent cancelled before its provider rejects from the wait itself.
  return direct === false ? waiting.then(start) : waiting.then(start, (error) => {
    throw failedText(domain, task, error, direct)
  })
}
