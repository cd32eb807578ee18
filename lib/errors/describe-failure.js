// describeFailure(error): the public failure channel (docs/JOURNAL.md "Failure channel").
//
// Structural, so it works on errors from any physical copy of the package: it reads `name`,
// `message`, `code`, `cause` and `errors` (each once, a throwing accessor reads as absent) and
// never uses `instanceof`. The message it returns is AML's own text for AML errors, trimmed of
// anything a provider, a process or the environment wrote into it (stderr tails, provider
// text); anything AML did not write gets a curated sentence instead.

import { readMember as read } from "./read-member.js"

const MAX_CAUSES = 8

const SPAN = /\((span-\d+|trace-\d+)\)/
const SPAN_AT = / at Agent (span-\d+|trace-\d+)(?: \(\d+ tokens used\))?$/

function spanOf(message) {
  return SPAN.exec(message)?.[1] ?? SPAN_AT.exec(message)?.[1]
}

// [test, kind, retryable, safe message (optional rewrite)]; first match wins. Order matters:
// the specific Agent/Script/Sandbox/Workspace shapes precede the configuration catch-all.
const EVALUATION_RULES = [
  [/^AML engine panicked|out of lifecycle order|is not active$|^AML evaluation domain is closed$/, "internal", false, () => "AML failed internally"],
  [/exceeded max(AgentCalls|Depth|TurnsPerAgent|StateTransitions) |^AML evaluation reached maxTokens /, "limit", false],
  [/^Agent ".*" \((span|trace)-\d+\) was cancelled before provider execution$/, "cancelled", true],
  [/^Agent ".*" \((span|trace)-\d+\) failed$/, "agent", true],
  [/ returned invalid structured output$/, "configuration", false],
  [/ returned an invalid response$/, "agent", true],
  [/schema validation failed|JSON Schema is invalid|invalid input JSON Schema/, "configuration", false],
  [/^Agent provider ".*" (cannot run inside|failed its) Sandbox/, "sandbox", false],
  [/^Sandbox provider ".*" failed to (acquire|release)/, "sandbox", true],
  [/^Workspace provider ".*" failed to acquire/, "workspace", true],
  [/read-only/, "configuration", false],
  [/^<Script> timed out after \d+ ms$/, "script", true],
  [/^(<Script> exited with code -?\d+)/, "script", false, (m) => m[1]],
  [/^(<Script> exited from signal [A-Z0-9]+)/, "script", false, (m) => m[1]],
  [/^<Script> could not (start|run) /, "script", false],
  [/^Tool ".*" was called after its Agent completed$/, "tool", false],
  [/^AML evaluation was cancelled/, "cancelled", true],
]

const ERROR_RULES = [
  [/ output exceeded \d+ bytes$/, "limit", false],
  [/^AML journal /, "configuration", false],
  [/^Local Sandbox command timed out after \d+ ms$/, "sandbox", true],
  [/^Local Sandbox .* (must be a directory|resolves outside its configured boundary)$/, "configuration", false],
  [/^(Local Sandbox setup failed with exit code -?\d+)/, "sandbox", false, (m) => m[1]],
  [/^Local Sandbox lease was released while the command ran$/, "sandbox", false],
  [/^Workspace storage adapter failed$|^Workspace lease was already released$/, "workspace", true],
  // AML's own argument and contract checks (TypeErrors): their subjects are AML names.
  [/^(evaluate\(\) |AML journal |File journal |<[A-Z][A-Za-z]*[ >]|Agent (output|structured) |Tool |Sandbox command |MCP |Workspace )/, "configuration", false],
]

// A durable journal's failure carries its class as `code`, decided where the protocol is known
// (crates/aml-restate/src/failure.rs): [kind, retryable]. The message is cut to the part AML
// wrote (`AML Restate journal could not record step <key>`), without the server's text.
const JOURNAL_CODES = {
  AML_JOURNAL_UNAVAILABLE: ["journal", true],
  AML_JOURNAL_FENCED: ["journal", true],
  AML_JOURNAL_DEPLOYMENT: ["configuration", false],
  AML_JOURNAL_REJECTED: ["configuration", false],
  AML_JOURNAL_TOO_LARGE: ["limit", false],
}

function fromRules(rules, message) {
  for (const [test, kind, retryable, rewrite] of rules) {
    const match = test.exec(message)
    if (match !== null) return { kind, message: rewrite === undefined ? message : rewrite(match), retryable }
  }
  return undefined
}

/** The description of one error, without looking into `errors`; `undefined` if unknown. */
function known(error, signal) {
  if (signal !== undefined && signal.aborted && error === read(signal, "reason")) {
    return { kind: "cancelled", message: "The AML evaluation was cancelled", retryable: true }
  }
  if (typeof error !== "object" || error === null) return undefined
  const name = read(error, "name")
  const raw = read(error, "message")
  const message = typeof raw === "string" ? raw : ""
  const code = read(error, "code")
  if (code === "AML_WORKSPACE_CONFLICT") {
    return { kind: "workspace", message: "A Workspace already has an active writer", retryable: true }
  }
  if (typeof code === "string" && Object.hasOwn(JOURNAL_CODES, code)) {
    const [kind, retryable] = JOURNAL_CODES[code]
    const cut = message.indexOf(": ")
    return { kind, message: cut === -1 ? message : message.slice(0, cut), retryable }
  }
  if (name === "AbortError" || name === "TimeoutError") {
    return { kind: "cancelled", message: "The AML evaluation was cancelled", retryable: true }
  }
  if (name === "ToolInputError") return { kind: "tool", message, retryable: false }
  if (name === "ToolOutputError") return { kind: "tool", message, retryable: false }
  if (name === "EvaluationError") {
    return fromRules(EVALUATION_RULES, message) ?? { kind: "configuration", message, retryable: false }
  }
  if (name === "Error" || name === "TypeError" || name === "RangeError") return fromRules(ERROR_RULES, message)
  return undefined
}

/** Wrappers whose cause decides the kind: an Agent or Sandbox/Workspace boundary. */
const WRAPPER_KINDS = new Set(["agent", "sandbox", "workspace"])

function describeOne(error, signal, depth) {
  const errors = typeof error === "object" && error !== null ? read(error, "errors") : undefined
  if (Array.isArray(errors) && errors.length > 0 && read(error, "name") === "AggregateError") {
    return describeAggregate(error, errors, signal, depth)
  }
  const own = known(error, signal)
  if (own === undefined) return undefined
  const spanId = spanOf(own.message)
  if (WRAPPER_KINDS.has(own.kind) && own.retryable && depth < MAX_CAUSES) {
    // "Agent … failed" around a cancellation, a limit or a Workspace conflict is that
    // failure; around a provider's own error it stays an Agent failure (retryable).
    const inner = describeOne(read(error, "cause"), signal, depth + 1)
    if (inner !== undefined && inner.kind !== "internal") {
      return { kind: inner.kind, message: own.message, retryable: inner.retryable, spanId: spanId ?? inner.spanId }
    }
  }
  return { ...own, spanId }
}

function describeAggregate(error, errors, signal, depth) {
  const parts = errors.slice(0, 64).map((member) => describeOne(member, signal, depth + 1) ?? unknown())
  const first = parts.find((part) => part.kind !== "cancelled") ?? parts[0]
  const raw = read(error, "message")
  const message = typeof raw === "string" && raw.startsWith("AML ") ? raw : first.message
  return {
    kind: first.kind,
    message,
    retryable: parts.every((part) => part.retryable),
    spanId: first.spanId,
  }
}

function unknown() {
  return { kind: "internal", message: "The workflow failed with an error AML did not raise", retryable: false }
}

/**
 * A frozen `{ kind, message, retryable, spanId? }` for any thrown value. `options.signal`
 * (the evaluation's signal) lets a custom abort reason count as a cancellation.
 */
export function describeFailure(error, options) {
  const signal = options?.signal instanceof AbortSignal ? options.signal : undefined
  const found = describeOne(error, signal, 0) ?? unknown()
  const result = { kind: found.kind, message: found.message, retryable: found.retryable }
  if (found.spanId !== undefined) result.spanId = found.spanId
  return Object.freeze(result)
}

/**
 * The finish outcome of a failed evaluation with `failure` as a lazy, non-enumerable getter:
 * existing listeners see the documented keys unchanged and nothing is computed unless read.
 */
export function failedOutcome(error, runId, signal, usage) {
  const outcome = { error, runId, signal, status: "error" }
  if (usage != null) outcome.usage = usage
  let failure
  Object.defineProperty(outcome, "failure", {
    enumerable: false,
    get: () => (failure ??= describeFailure(error, { signal })),
  })
  return Object.freeze(outcome)
}
