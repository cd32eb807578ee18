// The EvaluationError for an engine rejection (a step code Op::Error and its message).

import { EvaluationError } from "../errors/errors.js"

/**
 * A new EvaluationError with `message`, except for the maxTokens rejection of the Agent that
 * reached the budget: that is the error the evaluation was stopped with (domain.stopForBudget),
 * so <Parallel> and the runtime see one cancellation and reject with that object.
 */
export function engineError(domain, message) {
  const budget = domain.budgetError
  return budget !== undefined && budget.message === message ? budget : new EvaluationError(message)
}
