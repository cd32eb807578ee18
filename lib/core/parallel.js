// <Parallel> (docs-next): each top-level child is a branch, evaluated concurrently as a
// nested task of the same domain — same cancellation, scopes, budgets, tracing and Agent
// scheduler as component-local evaluate(). Output keeps authored branch order whatever
// finishes first, and the Parallel waits for every branch (and its cleanup) before the
// parent continues.
//
// Choices where the pages are silent (docs/ARCHITECTURE.md lists them):
// - Failure: the Parallel fails only after every branch settled. One failed branch is
//   rethrown as is; several give AggregateError "AML Parallel branches failed" with the
//   errors in authored branch order. After an abort, branch errors that are only the
//   cancellation (the reason, or a queued Agent's "cancelled" error) give the reason itself.
// - A branch is its own text subtree: Agent capabilities (<Tool>, <Mcp>, <FollowUp>,
//   <System>) inside a branch belong to an Agent inside that branch.
// - Trace: a `parallel` span named "Parallel" (trace-N); each branch's spans are its
//   children. Props other than children are rejected.

import { EvaluationError } from "../errors/errors.js"

function branchesOf(children) {
  if (children === undefined || children === null || typeof children === "boolean") return []
  return Array.isArray(children) ? [...children] : [children]
}

/**
 * After an abort every running branch rejects with the caller's reason and a queued Agent
 * with "…was cancelled before provider execution" (cause: the reason). Those are one
 * cancellation, not several branch failures: evaluate() must reject with the reason itself,
 * as it does without <Parallel>.
 */
function isCancellation(error, signal) {
  if (!signal.aborted) return false
  const reason = signal.reason
  return error === reason || (error instanceof EvaluationError && error.cause === reason)
}

async function runBranches(domain, task, branches, env) {
  const results = await Promise.allSettled(branches.map((branch) => domain.evaluateNested(task, branch, env)))
  const signal = domain.signal
  const errors = []
  let cancelled = false
  let output = ""
  for (const result of results) {
    if (result.status === "fulfilled") output += result.value
    else if (isCancellation(result.reason, signal)) cancelled = true
    else errors.push(result.reason)
  }
  if (cancelled && errors.length === 0) throw signal.reason
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, "AML Parallel branches failed")
  return output
}

/** Enters a <Parallel> node through the scope protocol. Returns the engine's step code. */
export function enterParallel(domain, task, node, slot) {
  const props = node.props
  for (const key of Object.keys(props)) {
    if (key !== "children") throw new EvaluationError(`<Parallel> does not accept a ${key} prop`)
  }
  const branches = branchesOf(props.children)
  const env = slot.env
  slot.ownsChildren = true
  slot.complete = async () => {
    const output = await runBranches(domain, task, branches, env)
    const attributes = JSON.stringify({ branches: branches.length })
    return domain.native.scopeDone(task, output, attributes, undefined)
  }
  return domain.native.enterScope(task, "parallel", "Parallel", false, false, undefined, undefined)
}
