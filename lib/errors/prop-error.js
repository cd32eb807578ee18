// A prop type error that remembers what kind of value it received, for `aml run`'s hint
// line (lib/cli/hints.js): `<Agent> model must be a string` plus `received a number (42)`.
// The message stays the documented one; the description sits on a non-enumerable
// Symbol.for property, so it changes no key, no JSON and no message, and an error from
// another copy of the SDK carries it too. Only the kind of value is kept, never a string's
// text (a prop may hold a secret); numbers and booleans are shown, they say what went wrong.

import { EvaluationError } from "./errors.js"
import { isNormalized } from "../checks/normalized.js"

const RECEIVED = Symbol.for("@aml-jsx/sdk/received-type")

/** What `value` is, in words: `a number (42)`, `an empty string`, `null`. */
export function describeReceived(value) {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return "an array"
  switch (typeof value) {
    case "string":
      if (value.length === 0) return "an empty string"
      return isNormalized(value) ? "a string" : "a string with leading or trailing whitespace"
    case "number":
    case "boolean":
      return `a ${typeof value} (${String(value)})`
    case "object":
      return "an object"
    default:
      return `a ${typeof value}`
  }
}

/** `new EvaluationError(message)` marked with what the prop received. */
export function propTypeError(message, value) {
  const error = new EvaluationError(message)
  Object.defineProperty(error, RECEIVED, { value: describeReceived(value) })
  return error
}
