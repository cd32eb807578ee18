// The `journal` option of runtime.evaluate() (docs/JOURNAL.md): checked once per call, and
// attached to the evaluation's domain. A journaled domain's engine gets no maxAgentCalls
// bound of its own: the session counts real provider calls instead (replays are free).

import { EvaluationDomain } from "../core/domain.js"
import { JournalSession } from "./session.js"

const MESSAGE = "evaluate() journal must be an object with entries() and append() methods"

/** Throws the documented TypeError unless `journal` has the AmlJournal shape. */
export function checkJournal(journal) {
  if (typeof journal !== "object" || journal === null) throw new TypeError(MESSAGE)
  if (typeof journal.entries !== "function" || typeof journal.append !== "function") throw new TypeError(MESSAGE)
}

/** A domain for `journal`, with its JournalSession (whose entries load() must read). */
export function journaledDomain(listeners, options, signal, abortable, journal) {
  const limits = Object.freeze({ ...options.limits, maxAgentCalls: 0 })
  const domain = new EvaluationDomain(listeners, Object.freeze({ ...options, limits }), signal, abortable)
  domain.options = options
  domain.journal = new JournalSession(domain, journal, options.limits.maxAgentCalls)
  return domain
}
