// The behaviour shared by ProcessSignalCancellation (LIM-3) and `aml run`'s signal owner
// (cli.mdx "Interrupting a run"): the first SIGINT/SIGTERM aborts one signal and arms an
// unref'd force exit after the cleanup deadline; a second signal exits at once. Only the
// abort reason differs (`describe(name)`).

const EXIT_CODES = Object.freeze({ SIGINT: 130, SIGTERM: 143 })

export class SignalOwner {
  #controller = new AbortController()
  #exitCode = undefined
  #timer = undefined
  #disposed = false
  #deadlineMs
  #describe
  // One bound listener per signal, kept so dispose() removes exactly what was added.
  #onSigint = () => this.#receive("SIGINT")
  #onSigterm = () => this.#receive("SIGTERM")

  constructor(deadlineMs, describe) {
    this.#deadlineMs = deadlineMs
    this.#describe = describe
    process.on("SIGINT", this.#onSigint)
    process.on("SIGTERM", this.#onSigterm)
  }

  get signal() {
    return this.#controller.signal
  }

  /** 130 after SIGINT, 143 after SIGTERM, undefined while no signal has arrived. */
  get exitCode() {
    return this.#exitCode
  }

  #receive(name) {
    const code = EXIT_CODES[name]
    if (this.#exitCode !== undefined) {
      // A second signal is the operator overriding graceful cleanup.
      process.exit(code)
      return
    }
    this.#exitCode = code
    // The deadline bounds cleanup that is still running; it is not a reason to stay alive.
    // The timer is unref'd so that, when every evaluation and its cleanup have finished, the
    // process ends normally (with whatever process.exitCode the application set) instead of
    // idling until the deadline only to be force-exited.
    const timer = setTimeout(() => process.exit(code), this.#deadlineMs)
    timer.unref()
    this.#timer = timer
    // Aborted last: abort listeners run synchronously and may already dispose(), which must
    // then find (and clear) the timer and see the final exitCode.
    this.#controller.abort(new Error(this.#describe(name)))
  }

  /** Removes both listeners and cancels a pending force exit. Safe to call repeatedly. */
  dispose() {
    if (this.#disposed) return
    this.#disposed = true
    process.removeListener("SIGINT", this.#onSigint)
    process.removeListener("SIGTERM", this.#onSigterm)
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }
}
