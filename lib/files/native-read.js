// Trusted application reads done natively (crates/aml-files/src/source_read.rs): the file
// work is Rust; JS keeps only the evaluation's signal and the Node-shaped errors.

import { getSystemErrorMap } from "node:util"

import { cancellationCancel, cancellationCreate, cancellationRelease } from "../core/native.js"

/**
 * The error `node:fs` would have thrown for a native fault (`code`, negative `errno`, …).
 * Node names no path for a failed `read` (the descriptor is already open), so neither do we.
 */
export function fsError(fault) {
  if (fault.errno === undefined || fault.errno === null) return new Error(fault.message)
  const [code, description] = getSystemErrorMap().get(-fault.errno) ?? [`errno ${fault.errno}`, "unknown error"]
  const named = fault.syscall !== "read" && fault.real !== undefined && fault.real !== null
  const error = new Error(`${code}: ${description}, ${fault.syscall}${named ? ` '${fault.real}'` : ""}`)
  error.errno = -fault.errno
  error.code = code
  error.syscall = fault.syscall
  if (named) error.path = fault.real
  return error
}

/**
 * Runs `read(absolute, token)` with a cancellation token that the evaluation's abort
 * cancels; raced against the signal, so an abort rejects with its reason at once (the
 * native step stops at its next check).
 */
export async function nativeRead(domain, read, absolute) {
  const signal = domain.signal
  if (signal.aborted) throw signal.reason
  const token = cancellationCreate()
  const cancel = () => cancellationCancel(token)
  signal.addEventListener("abort", cancel, { once: true })
  try {
    return await domain.race(read(absolute, token))
  } finally {
    signal.removeEventListener("abort", cancel)
    cancellationRelease(token)
  }
}
