// How `aml run` reports a failure on stderr: `aml: <message>`, then one
// `  caused by: <message>` line per link of the `cause` chain, and for an AggregateError one
// `  including: <message>` line per member, each followed by that member's own chain one
// level deeper. Values that are not errors print readably: a Standard Schema issue list
// (what a schema failure carries as its cause) one issue a line, other objects as JSON.
// Then the hints of lib/cli/hints.js, one `hint:` line each.

import { readMember as read } from "../errors/read-member.js"
import { hintsFor } from "./hints.js"

// Bounds for hostile or enormous values: a diagnostic is for a person to read.
const MAX_DEPTH = 8
const MAX_ISSUES = 20
const MAX_JSON = 300

/** A Standard Schema issue list: the array itself, or a `{ issues }` failure result. */
function issuesOf(value) {
  const list = Array.isArray(value) ? value : read(value, "issues")
  if (!Array.isArray(list) || list.length === 0) return undefined
  return list.every((issue) => typeof issue === "object" && issue !== null && typeof read(issue, "message") === "string") ? list : undefined
}

// Standard Schema paths hold keys or `{ key }` segments: `items[2].name`, `(root)` when empty.
function pathText(path) {
  if (!Array.isArray(path) || path.length === 0) return "(root)"
  let text = ""
  for (const segment of path) {
    const key = typeof segment === "object" && segment !== null ? read(segment, "key") : segment
    if (typeof key === "number") text += `[${key}]`
    else text += text === "" ? String(key) : `.${String(key)}`
  }
  return text
}

function jsonText(value) {
  let text
  try {
    text = JSON.stringify(value)
  } catch {
    text = undefined
  }
  if (typeof text !== "string") return String(value)
  return text.length > MAX_JSON ? `${text.slice(0, MAX_JSON)}…` : text
}

function messageOf(value) {
  if (value instanceof Error) return value.message === "" ? value.name : value.message
  if (typeof value === "object" && value !== null) {
    const message = read(value, "message")
    if (typeof message === "string") return message
    // A plain object printed as `[object Object]` hides what failed.
    return Object.prototype.toString.call(value) === "[object Object]" || Array.isArray(value) ? jsonText(value) : String(value)
  }
  return String(value)
}

// `value` as the text after `caused by: ` / `including: `, plus lines of its own (issues).
function describe(value, indent) {
  const issues = typeof value === "object" && value !== null && !(value instanceof Error) ? issuesOf(value) : undefined
  if (issues === undefined) return messageOf(value)
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => `\n${indent}  - ${pathText(read(issue, "path"))}: ${read(issue, "message")}`)
  const more = issues.length > MAX_ISSUES ? `\n${indent}  - … ${issues.length - MAX_ISSUES} more` : ""
  return `${issues.length === 1 ? "1 schema issue" : `${issues.length} schema issues`}:${shown.join("")}${more}`
}

// The `caused by:` and `including:` lines under `error`, at `indent`; `seen` cuts cycles.
function details(error, indent, seen, depth) {
  let text = ""
  let current = error
  // Bounded by identity so a cyclic cause chain cannot loop.
  while (typeof current === "object" && current !== null && "cause" in current && !seen.has(read(current, "cause"))) {
    current = read(current, "cause")
    seen.add(current)
    text += `\n${indent}caused by: ${describe(current, indent)}`
    // An aggregate inside the chain lists its members too, under its own line.
    if (current instanceof AggregateError) text += members(current, `${indent}  `, seen, depth)
  }
  // An AggregateError (a Parallel's branches, several cleanups) lists what it aggregates.
  if (error instanceof AggregateError) text += members(error, indent, seen, depth)
  return text
}

// One `including:` line per member, each followed by the member's own causes one level
// deeper: the reason a branch failed is usually in them.
function members(aggregate, indent, seen, depth) {
  let text = ""
  const errors = read(aggregate, "errors")
  if (!Array.isArray(errors)) return text
  for (const inner of errors) {
    text += `\n${indent}including: ${describe(inner, indent)}`
    if (depth < MAX_DEPTH && typeof inner === "object" && inner !== null && !seen.has(inner)) {
      seen.add(inner)
      text += details(inner, `${indent}  `, seen, depth + 1)
    }
  }
  return text
}

/** Every value in `error`'s diagnostic (itself, its causes, aggregate members), in print order. */
export function failureValues(error) {
  const found = []
  const seen = new Set()
  const visit = (value, depth) => {
    if (seen.has(value) || depth > MAX_DEPTH) return
    seen.add(value)
    found.push(value)
    if (typeof value !== "object" || value === null) return
    if ("cause" in value) visit(read(value, "cause"), depth + 1)
    if (value instanceof AggregateError && Array.isArray(value.errors)) for (const inner of value.errors) visit(inner, depth + 1)
  }
  visit(error, 0)
  return found
}

/** The full diagnostic for `error` with its hints, without a trailing newline. */
export function formatFailure(error) {
  const values = failureValues(error)
  // A compile error's code frame (lib/cli/code-frame.js) goes under the whole chain.
  const frame = values.find((value) => typeof value?.codeFrame === "string")?.codeFrame
  const framed = frame === undefined ? "" : `\n${frame.replace(/^/gm, "    ")}`
  const text = `aml: ${messageOf(error)}${details(error, "  ", new Set([error]), 0)}${framed}`
  const hints = hintsFor(values, messageOf)
  return hints.length === 0 ? text : `${text}\n${hints.map((hint) => `hint: ${hint}`).join("\n")}`
}
