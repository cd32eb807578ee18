// amlWorkflow(): a Restate workflow whose `run` handler evaluates an AML tree durably
// (docs/DURABLE.md). The cut: the whole evaluation is the unit Restate retries, and AML's own
// position-keyed journal is kept in Restate (lib/durable/journal-object.js) through the step
// seam (AmlJournal: entries() once, append() per settled step). Nothing in the handler's own
// Restate journal depends on the order in which concurrent Agents settle, so a retry on
// another worker replays every settled step by its position, whatever the order was.

import { randomUUID } from "node:crypto"

import { describeFailure } from "../errors/describe-failure.js"
import { journalObject } from "./journal-object.js"
import { createRestateJournal, journalOptions, openJournal } from "./restate-journal.js"
import { restateSdk } from "./restate-sdk.js"
import { restateJournalClose } from "../core/native.js"

/**
 * Long Agent calls send Restate nothing while they run; Restate's defaults (1 min of
 * inactivity, then 10 min to abort) would stop a healthy evaluation. A dead worker is still
 * noticed at once: its connection to the server breaks.
 */
export const DEFAULT_INACTIVITY_TIMEOUT = Object.freeze({ hours: 24 })
export const DEFAULT_ABORT_TIMEOUT = Object.freeze({ minutes: 10 })

/** The environment variable that holds the journal secret when `journalSecret` is not given. */
export const SECRET_VARIABLE = "AML_RESTATE_JOURNAL_SECRET"

const NAMES = Object.freeze({
  subject: "amlWorkflow",
  headers: "ingressHeaders",
  secret: "journalSecret",
  secretHint: ` (or set ${SECRET_VARIABLE}): every worker of the deployment shares it`,
  timeoutMs: "journalTimeoutMs",
})

/** Every option checked before the SDK loads; returns what the handler needs. */
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
  const journal = {
    headers: options.ingressHeaders,
    ingress,
    key: "check",
    object: journalName,
    secret: options.journalSecret ?? process.env[SECRET_VARIABLE],
    timeoutMs: options.journalTimeoutMs,
  }
  // Opening once checks what only the native side knows (the URL, header names and values),
  // so no attempt can fail on an option later.
  restateJournalClose(openJournal(journalOptions(journal, NAMES), NAMES))
  return { journal, journalName }
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
  const { journal: journalSettings, journalName } = check(options)
  const sdk = await restateSdk()
  const { render, runtime } = options
  const evaluateOptions = options.evaluate ?? {}
  const journalDefinition = journalObject(sdk, journalName)
  /** Ends this run's journal: a one-way call in the workflow's own journal, so it happens once. */
  const clear = (ctx, run) => ctx.objectSendClient(journalDefinition, ctx.key).clear({ run })
  const run = async (ctx, input) => {
    // The run's id, drawn once and kept in the invocation's journal, so every attempt of this
    // run shares it and a later run of the same workflow id (after a purge) draws another.
    // Not ctx.rand: it is seeded from the invocation id, which a resubmission can reuse.
    const runId = await ctx.run("aml journal run", () => randomUUID())
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
    let journal
    try {
      // A fresh token per attempt for the journal object's fence (journal-object.js). Not
      // ctx.rand: Restate replays that, so every attempt would get the same token.
      journal = createRestateJournal({ ...journalSettings, attempt: randomUUID(), key: ctx.key, run: runId })
      const use = typeof runtime === "function" ? await runtime(input, ctx) : runtime
      const tree = await render(input, ctx)
      const result = await use.evaluate(tree, { ...evaluateOptions, journal, signal: controller.signal })
      clear(ctx, runId)
      return result
    } catch (error) {
      if (cancelled !== undefined) {
        clear(ctx, runId)
        throw cancelled
      }
      const thrown = restateError(sdk, error)
      // The run ends here (no retry follows a terminal error): its journal goes with it.
      if (thrown instanceof sdk.TerminalError) clear(ctx, runId)
      throw thrown
    } finally {
      attempt.removeEventListener("abort", onAttemptEnd)
      journal?.close()
    }
  }
  const workflowOptions = { abortTimeout: DEFAULT_ABORT_TIMEOUT, inactivityTimeout: DEFAULT_INACTIVITY_TIMEOUT, ...options.options }
  const workflow = sdk.workflow({ handlers: { run }, name: options.name, options: workflowOptions })
  return Object.freeze({ journal: journalDefinition, workflow })
}
