// How `aml run` reports a failure on stderr: `aml: <message>`, then one
// `  caused by: <message>` line per link of the `cause` chain.

function messageOf(value) {
  if (value instanceof Error) return value.message === "" ? value.name : value.message
  if (typeof value === "object" && value !== null && typeof value.message === "string") return value.message
  return String(value)
}

/** The full diagnostic for `error`, without a trailing newline. */
export function formatFailure(error) {
  let text = `aml: ${messageOf(error)}`
  const seen = new Set([error])
  let current = error
  // Bounded by identity so a cyclic cause chain cannot loop.
  while (typeof current === "object" && current !== null && "cause" in current && !seen.has(current.cause)) {
    current = current.cause
    seen.add(current)
    text += `\n  caused by: ${messageOf(current)}`
  }
  // An AggregateError (a Parallel's branches, several cleanups) lists what it aggregates.
  if (error instanceof AggregateError) {
    for (const inner of error.errors) text += `\n  including: ${messageOf(inner)}`
  }
  return text
}
