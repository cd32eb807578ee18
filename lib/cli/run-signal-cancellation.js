// `aml run`'s signal owner (cli.mdx "Interrupting a run"): ProcessSignalCancellation's
// behaviour with the CLI's own abort reason, `aml run interrupted by SIG…`.

const EXIT_CODES = Object.freeze({ SIGINT: 130, SIGTERM: 143 })

export class RunSignalCancellation {
  #controller = new AbortController()
  #exitCode = undefined
  #timer = undefined
  #deadlineMs
  #onSigint = () => this.#receive("SIGINT")
  #onSigterm = () => this.#receive("SIGTERM")

  constructor(deadlineMs = 10_000) {
    this.#deadlineMs = deadlineMs
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
      // The operator overrides graceful cleanup.
      process.exit(code)
      return
    }
    this.#exitCode = code
    // Unref'd: once cleanup settled and dispose() ran, nothing should wait for the deadline;
    // while cleanup is still running, its own handles keep the process (and so this) alive.
    const timer = setTimeout(() => process.exit(code), this.#deadlineMs)
    timer.unref()
    this.#timer = timer
    this.#controller.abort(new Error(`aml run interrupted by ${name}`))
  }

  dispose() {
    process.removeListener("SIGINT", this.#onSigint)
    process.removeListener("SIGTERM", this.#onSigterm)
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
