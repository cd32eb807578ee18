// ProcessSignalCancellation (INVENTORY LIM-3): an opt-in bridge from SIGINT/SIGTERM to one
// AbortSignal. Only the constructor touches `process`, so importing the SDK installs nothing.
// The behaviour is lib/process/signal-owner.js, shared with `aml run`.

import { SignalOwner } from "./signal-owner.js"

const DEFAULT_CLEANUP_DEADLINE_MS = 10_000

export class ProcessSignalCancellation {
  #owner

  constructor(options) {
    // Only an absent value means the default; null is as invalid as any other non-integer.
    const option = options?.cleanupDeadlineMs
    const deadline = option === undefined ? DEFAULT_CLEANUP_DEADLINE_MS : option
    if (!Number.isSafeInteger(deadline) || deadline < 0) {
      throw new RangeError("Process signal cleanupDeadlineMs must be a non-negative safe integer")
    }
    // Validation happens first, so a rejected option leaves no listener behind.
    this.#owner = new SignalOwner(deadline, (name) => `AML evaluation interrupted by ${name}`)
  }

  /** Aborts on the first SIGINT or SIGTERM, with reason `AML evaluation interrupted by SIG…`. */
  get signal() {
    return this.#owner.signal
  }

  /** 130 after SIGINT, 143 after SIGTERM, undefined while no signal has arrived. */
  get exitCode() {
    return this.#owner.exitCode
  }

  /** Removes both listeners and cancels a pending force exit. Safe to call repeatedly. */
  dispose() {
    this.#owner.dispose()
  }
}
