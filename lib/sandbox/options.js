// The option rules every Sandbox provider shares (local, Docker, Daytona, Modal). Each
// provider passes its label, so the documented messages keep naming it.

import { isNormalized } from "../checks/normalized.js"
import { isRecord } from "../checks/shapes.js"

/** The bound on exec()/spawn() and `setup` output when `maxOutputBytes` is not given. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024

/** Throws `<label> options must be an object` unless `options` is a plain record. */
export function checkOptionsRecord(label, options) {
  if (!isRecord(options)) throw new TypeError(`${label} options must be an object`)
}

/** `maxOutputBytes` (default 4 MiB): a positive safe integer. */
export function maxOutputBytesOption(label, value) {
  const maxOutputBytes = value ?? DEFAULT_MAX_OUTPUT_BYTES
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes <= 0) {
    throw new RangeError(`${label} maxOutputBytes must be a positive safe integer`)
  }
  return maxOutputBytes
}

/** An optional string a host Sandbox hands to the host (setup, workspace, image, user): normalized, no NUL. */
export function normalizedOption(label, value, name) {
  if (value === undefined) return undefined
  if (!isNormalized(value) || value.includes("\0")) {
    throw new TypeError(`${label} ${name} must be a non-empty normalized string`)
  }
  return value
}
