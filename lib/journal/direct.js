// The one-call path (lib/agents/direct.js) in a journaled evaluation (docs/JOURNAL.md):
// `evaluate(<Agent>prompt</Agent>)` from a component is created, entered and looked up in
// one engine call (src/hot_path/journal.rs, journalLocalText), which answers one string: the
// recorded text of a replayed Agent as it is, or an answer marked with NUL and a kind
// letter (`answer` there). This file reads that answer; lib/journal/agent.js runs and records
// what was not replayed.

import { journalLocalText } from "../core/native.js"
import { nodeIdentity } from "../core/node.js"

/**
 * The one-call path (lib/agents/direct.js) in a journaled evaluation, `evaluate(<Agent>prompt</Agent>)`
 * from the component on top of `parent`: the nested task is created, entered, looked up
 * and, when a text entry matches, replayed, finished and released in one engine call
 * (src/hot_path/journal.rs). A replay answers the task's text: the caller's promise is then
 * settled from the start, so no bookkeeping, reaction or promise of AML's own follows (the
 * lean replay). Otherwise `[task, value]` for runTextAgent (enterJournaledTextAgent): the
 * engine's marked answer when the Agent is ready, a step code, or the engine's error.
 */
export function enterLocalText(domain, parent, node, prompt) {
  const provider = domain.options.agentProvider
  const answer = journalLocalText(domain.native.id, domain.journal.index.id, parent, nodeIdentity(node), provider !== undefined, provider?.name, prompt)
  // Every answer but a replayed text starts with NUL and a kind letter (journal_hot.rs, `answer`).
  if (answer.charCodeAt(0) !== 0) {
    if (domain.tracing) domain.flushTrace()
    return answer
  }
  const kind = answer.charCodeAt(1)
  if (kind === KIND_TEXT) {
    if (domain.tracing) domain.flushTrace()
    return answer.slice(2)
  }
  // `\0<kind><task>\n…`
  let at = 2
  let task = 0
  for (let c = answer.charCodeAt(at); c !== NEWLINE; c = answer.charCodeAt(++at)) task = task * 10 + c - ZERO
  if (kind === KIND_READY) return [task, answer]
  const rest = answer.slice(at + 1)
  // A step other than the expected one, or the engine failed after creating the task.
  return [task, kind === KIND_STOPPED ? Number(rest) : new Error(rest)]
}

const NEWLINE = 10
const MINUS = 45
const ZERO = 48
const KIND_READY = 82
const KIND_STOPPED = 83
const KIND_TEXT = 84

/**
 * runTextAgent's journaled half, with what enterLocalText found (`entered`): a step code
 * (a step other than the expected one) or the plan ([spanId, parentSpanId, prompt,
 * system], what runTextAgent reads from the engine's line without a journal) of an Agent
 * to run and record; the lookup status waits on the session for runJournaledAgent.
 */
export function enterJournaledTextAgent(domain, prompt, entered) {
  const line = entered[1]
  if (typeof line === "number") return line
  // The engine failed after creating the task (src/hot_path/journal.rs): runTextAgent fails it.
  if (typeof line !== "string") throw line
  // \0R task \n status \n spanId \n parentSpanId \n system (src/hot_path/journal.rs, ready_line)
  let at = line.indexOf("\n", 2) + 1
  let sign = 1
  if (line.charCodeAt(at) === MINUS) {
    sign = -1
    at++
  }
  let status = 0
  for (let c = line.charCodeAt(at); c !== NEWLINE; c = line.charCodeAt(++at)) status = status * 10 + c - ZERO
  domain.journal.step = sign * status
  const second = line.indexOf("\n", at + 1)
  const third = line.indexOf("\n", second + 1)
  return [line.slice(at + 1, second), line.slice(second + 1, third), prompt.trim(), line.slice(third + 1)]
}
