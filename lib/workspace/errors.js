// Rebuilds the JS error for a failure the Rust workspace engine reports as data
// (crates/aml-workspace/src/error.rs): the documented class and message, `cause`, the
// aggregated `errors`, Node's `code` for I/O failures, and, for a value a JS storage adapter
// threw, that very value (`host`), so applications see their own errors.

import { WorkspaceConflictError } from "../errors/errors.js"

export function workspaceError(json, hostErrors, aborted) {
  return build(JSON.parse(json), hostErrors, aborted)
}

// `aborted`: the signal that interrupted the call; the engine's abort error is its reason.
function build(data, hostErrors, aborted) {
  if (aborted !== undefined && data.code === "ABORT_ERR") return aborted.reason
  if (data.kind === "host") {
    if (hostErrors !== undefined && hostErrors.has(data.reference)) return hostErrors.get(data.reference)
    return new Error("Workspace storage adapter failed")
  }
  if (data.kind === "conflict") return new WorkspaceConflictError(data.workspaceId)
  const options = data.cause === undefined ? undefined : { cause: build(data.cause, hostErrors, aborted) }
  let error
  switch (data.kind) {
    case "aggregateError":
      error = new AggregateError(
        (data.errors ?? []).map((inner) => build(inner, hostErrors, aborted)),
        data.message,
        options,
      )
      break
    case "typeError":
      error = new TypeError(data.message, options)
      break
    case "rangeError":
      error = new RangeError(data.message, options)
      break
    default:
      error = new Error(data.message, options)
  }
  if (data.code !== undefined) error.code = data.code
  return error
}

/** Throws the outcome's error if it failed; returns it otherwise. */
export function settled(outcome, hostErrors, aborted) {
  if (!outcome.ok) throw workspaceError(outcome.error, hostErrors, aborted)
  return outcome
}
