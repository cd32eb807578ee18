// AgentResponse.usage (issue 37): handed to the engine as the provider gave it. The engine
// validates it (a bad value fails the Agent), puts it on the Agent span, sums it and applies
// maxTokens (crates/aml-engine/src/usage.rs); nothing here interprets it.

import { EvaluationError } from "../errors/errors.js"
import { normalizeUsage } from "../core/native.js"

/**
 * Reports `response.usage` of the ready Agent on top of `task`, if the provider gave one.
 * Returns what a journal records for it (issue 37): the usage with only its reported fields,
 * or undefined (none, or a bad one, which fails the Agent in the engine and is never recorded).
 */
export function reportUsage(domain, task, response, label) {
  let usage
  try {
    usage = response.usage
  } catch (cause) {
    throw new EvaluationError(`${label} returned an invalid response`, { cause })
  }
  // Undefined and null are "not reported": providers that never report stay on this one read.
  if (usage === undefined || usage === null) return undefined
  const reached = domain.native.agentUsage(task, usage)
  // This answer reaches maxTokens: the rest of the evaluation stops now (before the answer
  // lands and the engine fails this Agent with the same message).
  if (reached !== null) domain.stopForBudget(reached)
  if (domain.journal === undefined) return undefined
  try {
    return normalizeUsage(usage) ?? undefined
  } catch {
    return undefined
  }
}
