// AmlRuntime: captured options, runtime-wide listeners, and the order of work of one
// evaluation (INVENTORY RT-1): start listeners, second abort check, root span, tree,
// resource release, finish listeners, root span close.

import { EvaluationDomain } from "./domain.js"
import { failedOutcome } from "../errors/describe-failure.js"
import { describeError } from "../errors/error-shape.js"
import { checkJournal, journaledDomain } from "../journal/option.js"
import { dispatchFinish, dispatchStart } from "./lifecycle.js"
import { ListenerRegistry } from "./listeners.js"
import { captureRuntimeOptions, limit } from "./runtime-options.js"

/** The run recorders of a runtime (lib/studio/recorder.js `recordRuns`): a module-private key. */
export const RUN_RECORDERS = Symbol("AML run recorders")

export class AmlRuntime {
  #options
  #listeners
  #domains = new Set()
  #recorders = new Set()

  /** Where recordRuns adds and removes its recorder. */
  get [RUN_RECORDERS]() {
    return this.#recorders
  }

  constructor(options) {
    this.#options = captureRuntimeOptions(options)
    this.#listeners = new ListenerRegistry(() => {
      for (const domain of this.#domains) domain.refreshTracing()
    })
    if (this.#options.trace !== undefined) this.#listeners.add("trace", this.#options.trace, false)
  }

  on(name, listener) {
    return this.#listeners.add(name, listener, false)
  }

  once(name, listener) {
    return this.#listeners.add(name, listener, true)
  }

  evaluate(value, options) {
    const signal = options?.signal
    if (signal !== undefined && signal !== null) {
      if (!(signal instanceof AbortSignal)) {
        return Promise.reject(new TypeError("evaluate() signal must be an AbortSignal"))
      }
      if (signal.aborted) return Promise.reject(signal.reason)
    }
    // The opt-in evaluation journal (docs/JOURNAL.md); `undefined` keeps every path as it was.
    let journal = options?.journal
    if (journal === null) journal = undefined
    if (journal !== undefined) {
      try {
        checkJournal(journal)
      } catch (error) {
        return Promise.reject(error)
      }
    }
    // The per-evaluation budget (issue 37) replaces the runtime's for this call only.
    let evalOptions = this.#options
    const maxTokens = options?.maxTokens
    if (maxTokens !== undefined) {
      try {
        const limits = Object.freeze({ ...evalOptions.limits, maxTokens: limit(options, "maxTokens", 0) })
        evalOptions = Object.freeze({ ...evalOptions, limits })
      } catch (error) {
        return Promise.reject(error)
      }
    }
    if (signal === undefined || signal === null) return this.#run(value, new AbortController().signal, false, journal, evalOptions)
    return this.#run(value, signal, true, journal, evalOptions)
  }

  async #run(value, signal, abortable, journal, options) {
    // With a token budget the domain runs on its own signal, which the budget can abort and
    // which follows the caller's; without one nothing changes (maxTokens is off by default).
    const budget = options.limits.maxTokens > 0 ? new AbortController() : undefined
    let forward
    if (budget !== undefined && abortable) {
      forward = () => budget.abort(signal.reason)
      signal.addEventListener("abort", forward, { once: true })
    }
    const domainSignal = budget === undefined ? signal : budget.signal
    const domainAbortable = abortable || budget !== undefined
    const domain =
      journal === undefined
        ? new EvaluationDomain(this.#listeners, options, domainSignal, domainAbortable)
        : journaledDomain(this.#listeners, options, domainSignal, domainAbortable, journal)
    domain.budget = budget
    this.#domains.add(domain)
    try {
      return await this.#lifecycle(domain, value, signal)
    } finally {
      if (forward !== undefined) signal.removeEventListener("abort", forward)
      // After the root span's end: each recorder's record of the run is complete on disk.
      for (const recorder of domain.recorders) recorder.close(domain)
      // The native domain lives exactly as long as this call; detached work that outlives
      // it gets "AML evaluation domain is closed" instead of touching freed state.
      this.#domains.delete(domain)
      domain.dispose()
    }
  }

  async #lifecycle(domain, value, signal) {
    const registries = [this.#listeners, domain.local]
    let failed = false
    let error
    let result
    let rooted = false
    try {
      await dispatchStart(registries, Object.freeze({ runId: domain.runId, signal }))
      if (signal.aborted) throw signal.reason
      if (domain.journal !== undefined) await domain.journal.load()
      // Before the root span: a recorder's tap sees every record of the run.
      for (const recorder of this.#recorders) recorder.open(domain)
      rooted = true
      domain.native.openRoot()
      // At once even for batching sinks: they read the caller's OTel context at the root span.
      domain.drainTrace()
      result = await domain.evaluateRoot(value)
    } catch (caught) {
      failed = true
      error = caught
    }
    await domain.settleTasks()
    domain.close()
    try {
      // `usage`: the evaluation's reported usage (issue 37), absent when none was reported.
      const usage = domain.native.usage()
      if (usage !== undefined && usage !== null) Object.freeze(usage)
      // A failed outcome also carries `failure` (describeFailure, non-enumerable and lazy).
      const outcome = failed
        ? failedOutcome(error, domain.runId, signal, usage)
        : Object.freeze(usage == null ? { runId: domain.runId, signal, status: "ok" } : { runId: domain.runId, signal, status: "ok", usage })
      await dispatchFinish(registries, outcome)
    } catch (finishError) {
      error = failed
        ? new AggregateError([error, finishError], "AML evaluation and finish listeners both failed")
        : finishError
      failed = true
    }
    if (rooted) {
      if (failed) {
        const { type, message } = describeError(error)
        domain.native.closeRoot(type, message)
      } else {
        domain.native.closeRoot()
      }
      domain.drainTrace()
    }
    if (failed) throw error
    return result
  }
}
