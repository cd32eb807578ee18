// amlWorkflow(): a Restate workflow whose `run` handler evaluates an AML tree durably
// (docs/DURABLE.md). The cut: the whole evaluation is the unit Restate retries, and AML's own
// position-keyed journal is kept in Restate (lib/durable/journal-object.js) through the step
// seam (AmlJournal: entries() once, append() per settled step). Nothing in the handler's own
// Restate journal depends on the order in which concurrent Agents settle, so a retry on
// another worker replays every settled step by its position, whatever the order was.

import { randomUUID } from "node:crypto"

import { describeFailure } from "../errors/describe-failure.js"
import { journalObject } from "./journal-object.js"
import { createRestateJournal } from "./restate-journal.js"
import { restateSdk } from "./restate-sdk.js"

/**
 * Long Agent calls send Restate nothing while they run; Restate's defaults (1 min of
 * inactivity, then 10 min to abort) would stop a healthy evaluation. A dead worker is still
 * noticed at once: its connection to the server breaks.
 */
export const DEFAULT_INACTIVITY_TIMEOUT = Object.freeze({ hours: 24 })
export const DEFAULT_ABORT_TIMEOUT = Object.freeze({ minutes: 10 })

function check(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("amlWorkflow options must be an object")
  const { name, ingress, render, runtime } = options
  if (typeof name !== "string" || name.length === 0) throw new TypeError("amlWorkflow name must be a non-empty string")
  if (typeof ingress !== "string" || ingress.length === 0) throw new TypeError("amlWorkflow ingress must be the Restate ingress URL")
  if (typeof render !== "function") throw new TypeError("amlWorkflow render must be a function from the input to an AML tree")
  if (typeof runtime !== "function" && typeof runtime?.evaluate !== "function") {
    throw new TypeError("amlWorkflow runtime must be an AmlRuntime or a function returning one")
  }
  const journalName = options.journalName ?? `${name}Journal`
  if (typeof journalName !== "string" || journalName.length === 0 || journalName === name) {
    throw new TypeError("amlWorkflow journalName must be a non-empty string other than the workflow's name")
  }
  return journalName
}

/** The error Restate gets for `error`: terminal when retrying cannot help. */
function restateError(sdk, error) {
  if (error instanceof sdk.TerminalError) return error
  const failure = describeFailure(error)
  if (failure.retryable) return error
  const message = error instanceof Error ? error.message : String(error)
  return new sdk.TerminalError(message || failure.kind, { cause: error })
}

/**
 * `{ workflow, journal }`: bind both to the Restate endpoint. See docs/DURABLE.md for the
 * options and what re-runs on a retry.
 */
export async function amlWorkflow(options) {
  const journalName = check(options)
  const sdk = await restateSdk()
  const { ingress, ingressHeaders, journalTimeoutMs, render, runtime } = options
  const evaluateOptions = options.evaluate ?? {}
  const run = async (ctx, input) => {
    // A fresh token per attempt for the journal object's fence (journal-object.js). Not
    // ctx.rand: Restate replays that, so every attempt would get the same token.
    const journal = createRestateJournal({
      attempt: randomUUID(),
      headers: ingressHeaders,
      ingress,
      key: ctx.key,
      object: journalName,
      timeoutMs: journalTimeoutMs,
    })
    const controller = new AbortController()
    const abort = (reason) => {
      if (!controller.signal.aborted) controller.abort(reason)
    }
    // The attempt ended under the evaluation (Restate aborted it, or the handler already
    // answered): AML stops and cleans up instead of running on as a stray attempt.
    const attempt = ctx.request().attemptCompletedSignal
    const onAttemptEnd = () => abort(new DOMException("The Restate invocation attempt ended", "AbortError"))
    attempt.addEventListener("abort", onAttemptEnd, { once: true })
    // Cancellation reaches a handler as the rejection of a Restate promise it awaits; this
    // one is never resolved, so only a cancellation settles it.
    let cancelled
    ctx.awakeable().promise.then(undefined, (error) => {
      cancelled = error
      abort(error)
    })
    try {
      const use = typeof runtime === "function" ? await runtime(input, ctx) : runtime
      const tree = await render(input, ctx)
      const result = await use.evaluate(tree, { ...evaluateOptions, journal, signal: controller.signal })
      return result
    } catch (error) {
      if (cancelled !== undefined) throw cancelled
      throw restateError(sdk, error)
    } finally {
      attempt.removeEventListener("abort", onAttemptEnd)
      journal.close()
    }
  }
  const workflowOptions = { abortTimeout: DEFAULT_ABORT_TIMEOUT, inactivityTimeout: DEFAULT_INACTIVITY_TIMEOUT, ...options.options }
  const workflow = sdk.workflow({ handlers: { run }, name: options.name, options: workflowOptions })
  return Object.freeze({ journal: journalObject(sdk, journalName), workflow })
}
