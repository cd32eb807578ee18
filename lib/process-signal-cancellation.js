// ProcessSignalCancellation (INVENTORY LIM-3): an opt-in bridge from SIGINT/SIGTERM to one
// AbortSignal. Only the constructor touches `process`, so importing the SDK installs nothing.

const EXIT_CODES = Object.freeze({ SIGINT: 130, SIGTERM: 143 })
const DEFAULT_CLEANUP_DEADLINE_MS = 10_000

export class ProcessSignalCancellation {
  #controller = new AbortController()
  #exitCode = undefined
  #timer = undefined
  #disposed = false
  #deadlineMs
  // One bound listener per signal, kept so dispose() removes exactly what was added.
  #onSigint = () => this.#receive("SIGINT")
  #onSigterm = () => this.#receive("SIGTERM")

  constructor(options) {
    // Only an absent value means the default; null is as invalid as any other non-integer.
    const option = options?.cleanupDeadlineMs
    const deadline = option === undefined ? DEFAULT_CLEANUP_DEADLINE_MS : option
    if (!Number.isSafeInteger(deadline) || deadline < 0) {
      throw new RangeError("Process signal cleanupDeadlineMs must be a non-negative safe integer")
    }
    this.#deadlineMs = deadline
    // Validation happens first, so a rejected option leaves no listener behind.
    process.on("SIGINT", this.#onSigint)
    process.on("SIGTERM", this.#onSigterm)
  }

  /** Aborts on the first SIGINT or SIGTERM, with reason `AML evaluation interrupted by SIG…`. */
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
    this.#controller.abort(new Error(`AML evaluation interrupted by ${name}`))
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
