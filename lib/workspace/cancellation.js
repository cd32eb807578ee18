// Interrupting a native restore or save (crates/aml-workspace/src/cancel.rs): the signal's
// abort fires a native cancellation, the engine stops at its next file, cleans up what it
// made, and reports an `ABORT_ERR` failure, which becomes the signal's reason here.

import { workspaceCancel, workspaceCancellation, workspaceCancellationDone } from "../core/native.js"
import { settled } from "./errors.js"

/**
 * Runs `call(cancellation)` (a native workspace call returning a WorkspaceOutcome promise)
 * with a cancellation wired to `signal`; settles the outcome, rethrowing the abort as
 * `signal.reason`.
 */
export async function cancellable(signal, call, hostErrors) {
  if (signal === undefined || signal === null) return settled(await call(0), hostErrors?.())
  const handle = workspaceCancellation()
  const abort = () => workspaceCancel(handle)
  signal.addEventListener("abort", abort, { once: true })
  if (signal.aborted) abort()
  let outcome
  try {
    outcome = await call(handle)
  } finally {
    signal.removeEventListener("abort", abort)
    workspaceCancellationDone(handle)
  }
  return settled(outcome, hostErrors?.(), signal.aborted ? signal : undefined)
}
