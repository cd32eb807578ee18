// Option capture shared by the built-in ACP profiles (INVENTORY BA-1…BA-5): every factory is
// synchronous, does no I/O, reads each option once and throws the profile's TypeErrors.

import { isNormalizedName } from "../../checks/normalized.js"

/** Profile options name programs, files and models: normalized and without NUL. */
export const isNormalized = isNormalizedName

/** `options ?? {}` as a plain record, or `<Label> Agent options must be an object`. */
export function readOptions(options, label) {
  if (options === undefined) return {}
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${label} Agent options must be an object`)
  }
  return options
}

/** An optional normalized string, or `<prefix> must be a non-empty normalized string`. */
export function optionalString(value, prefix) {
  if (value === undefined) return undefined
  if (!isNormalized(value)) throw new TypeError(`${prefix} must be a non-empty normalized string`)
  return value
}

export function stringArgs(value, prefix) {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((arg) => typeof arg === "string" && !arg.includes("\0"))) {
    throw new TypeError(`${prefix} args must be strings without null bytes`)
  }
  return Object.freeze([...value])
}

/** A frozen copy of an env record (string values only). */
export function envRecord(value, prefix) {
  if (value === undefined) return Object.freeze({})
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${prefix} env must be an object`)
  }
  const out = {}
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") throw new TypeError(`${prefix} env must be an object`)
    out[key] = entry
  }
  return Object.freeze(out)
}

/** One of `allowed` or `<prefix> is unsupported`. */
export function oneOf(value, allowed, message) {
  if (value === undefined) return undefined
  if (!allowed.includes(value)) throw new TypeError(message)
  return value
}

/** The first-turn `<SYSTEM>` prelude for ACP agents without a system field. */
export function systemPrelude(system) {
  return system.length === 0 ? undefined : `<SYSTEM>\n${system}\n</SYSTEM>`
}

export const readOnly = (request) => request.permissions.filesystem === "read-only"
