// The one-call path of a text-only Agent evaluated as a task of its own:
// `evaluate(<Agent>prompt</Agent>)` from a component, the fan-out shape (docs/ARCHITECTURE.md,
// "The direct Agent path"). The generic driver (driver.js) would feed the node, the Agent
// protocol and the text child one crossing each and keep a mirror stack for them; the
// engine does the same steps in one call each way (crates/aml-engine/src/text_agent.rs).
// Only shapes whose generic evaluation is exactly that sequence take it: this copy's node,
// only a string child, no Agent prop to read or check, no Sandbox. In a journaled
// evaluation the journal replays or records it (lib/journal/direct.js, enterJournaledTextAgent).

import { engineError } from "../core/engine-error.js"
import { EvaluationError } from "../errors/errors.js"
import { describeError } from "../errors/error-shape.js"
import { nodeIdentity } from "../core/node.js"
import { Agent } from "../core/primitives.js"

const OP_DONE = 0
const OP_ERROR = 4
const TRACE_PENDING = 16

/**
 * The prompt of `value` when it can take the one-call path in `domain` under `env`, else
 * undefined. Reads nothing a user could observe: the private identity check comes first,
 * and this copy's nodes hold frozen data properties only.
 */
export function textAgentPrompt(domain, value, env) {
  if (typeof value !== "object" || value === null || nodeIdentity(value) === 0) return undefined
  if (value.type !== Agent || env.sandbox !== undefined) return undefined
  const props = value.props
  const prompt = props.children
  if (typeof prompt !== "string") return undefined
  if (
    props.model !== undefined ||
    props.system !== undefined ||
    props.permissions !== undefined ||
    props.provider !== undefined ||
    props.cwd !== undefined
  ) {
    return undefined
  }
  return prompt
}

/** The error the generic driver raises for a step code other than the expected one. */
export function stepFailure(domain, task, code) {
  if ((code & TRACE_PENDING) !== 0) domain.flushTrace()
  if ((code & 15) === OP_ERROR) return engineError(domain, domain.native.errorMessage(task))
  // Never expected after these steps: the driver's message for a step it cannot perform.
  return new EvaluationError("AML evaluation has not started")
}

/**
 * Lands the Agent's text; the task completes and is released, and its output is that text
 * (the task holds nothing else).
 */
export function finishDirect(domain, task, text, output) {
  landedDirect(domain, task, domain.native.finishTextAgent(task, text, output))
  return text
}

/** Checks the step code of a landed one-call Agent: done, or the driver's error. */
export function landedDirect(domain, task, code) {
  if ((code & 15) !== OP_DONE) throw stepFailure(domain, task, code)
  if ((code & TRACE_PENDING) !== 0) domain.flushTrace()
}

/**
 * The parent span id in the engine's `spanId \n parentSpanId \n system` line of a text
 * Agent (newlines at `first` and `second`; lib/agents/run.js runTextAgent). Fanned-out
 * Agents share their parent span: its id is read once per parent
 * (`domain.lastParentSpanId`), not kept as a fresh string by every in-flight Agent.
 */
export function textAgentParent(domain, line, first, second) {
  const last = domain.lastParentSpanId
  if (last !== undefined && second - first - 1 === last.length && line.startsWith(last, first + 1)) return last
  return (domain.lastParentSpanId = line.slice(first + 1, second))
}

/**
 * Closes the live task's spans with `error` and releases it, as the driver does for a
 * failed task, and returns the error to rethrow.
 */
export function failDirect(domain, task, error) {
  const { type, message } = describeError(error)
  try {
    domain.native.fail(task, type, message)
    domain.flushTrace()
  } catch {
    // The domain was already disposed (detached work after the run ended): no spans are
    // left to close, and the original error is what the caller must see.
  }
  return error
}
