// Standard Schema v1 and Standard JSON Schema v1 adapters (INVENTORY SO-1, TL-1, TL-3).
// A schema is captured once: its `~standard` members are read a single time and kept, so
// replacing them later cannot change what AML validates with. Every call into schema code
// runs with component evaluation masked (RT-2): a validator cannot re-enter evaluate().

import { masked } from "../core/component-scope.js"
import { jsonSchemaProblem } from "../core/native.js"
import { jsonText, snapshotJson } from "./stable-json.js"

/**
 * Captures the Standard Schema contract of `schema`, throwing the documented TypeErrors
 * prefixed with `label` ("Tool schema", "Agent output schema").
 * Returns `{ label, props, validate, jsonSchema }`; `jsonSchema` is the converter object
 * when the schema implements Standard JSON Schema, else undefined.
 */
export function captureSchema(schema, label) {
  // Function-valued schemas exist (arktype types are callable), so both count as objects.
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null) {
    throw new TypeError(`${label} must be an object`)
  }
  const props = schema["~standard"]
  if ((typeof props !== "object" && typeof props !== "function") || props === null) {
    throw new TypeError(`${label} must implement Standard Schema`)
  }
  const version = props.version
  const vendor = props.vendor
  const validate = props.validate
  if (version !== 1 || typeof vendor !== "string" || vendor.length === 0 || typeof validate !== "function") {
    throw new TypeError(`${label} has an invalid Standard Schema contract`)
  }
  const converter = props.jsonSchema
  let jsonSchema
  if ((typeof converter === "object" || typeof converter === "function") && converter !== null) {
    const input = converter.input
    if (typeof input === "function") jsonSchema = { converter, input }
  }
  return { jsonSchema, label, props, validate }
}

/** Throws the "must implement Standard JSON Schema" TypeError unless the converter exists. */
export function requireJsonSchema(captured) {
  if (captured.jsonSchema === undefined) {
    throw new TypeError(`${captured.label} must implement Standard JSON Schema`)
  }
}

/**
 * Generates the draft 2020-12 input JSON Schema and snapshots it. Returns one of
 * - `{ failure: "invalid", cause }`: the converter threw or returned something not JSON;
 * - `{ failure: "object" }`: the result is JSON but not an object;
 * - `{ snapshot, problem }`: `problem` is undefined when the document is a usable JSON
 *   Schema (crates/aml-engine/src/json_schema.rs), else the reason it is not.
 * Callers map the failures to their own documented messages.
 */
export function generateJsonSchema(captured) {
  const { converter, input } = captured.jsonSchema
  let document
  try {
    document = masked(() => input.call(converter, { target: "draft-2020-12" }))
  } catch (cause) {
    return { cause, failure: "invalid" }
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return { failure: "object" }
  }
  let snapshot
  try {
    snapshot = snapshotJson(document, `${captured.label} JSON Schema`)
  } catch (cause) {
    return { cause, failure: "invalid" }
  }
  const text = jsonText(snapshot)
  const problem = text === undefined ? "JSON Schema is too deeply nested" : problemOf(text)
  return { failure: undefined, problem, snapshot }
}

/**
 * The fitness check is a pure function of the document text and costs ~10 µs (compiling a
 * validator), while a structured evaluate() sends the same schema again and again: remember
 * recent answers. Bounded, so a stream of distinct schemas cannot grow it without limit.
 */
const checked = new Map()
const CHECKED_LIMIT = 256

function problemOf(text) {
  if (checked.has(text)) return checked.get(text)
  const problem = jsonSchemaProblem(text) ?? undefined
  if (checked.size >= CHECKED_LIMIT) checked.clear()
  checked.set(text, problem)
  return problem
}

function invalidResult(label) {
  return new TypeError(`${label} returned an invalid Standard Schema result`)
}

function isIssue(issue) {
  if (typeof issue !== "object" || issue === null || typeof issue.message !== "string") return false
  const path = issue.path
  return path === undefined || Array.isArray(path)
}

/**
 * Reads one Standard Schema result. Returns `{ ok: true, value }` or `{ ok: false, issues }`;
 * throws a TypeError for a malformed result (TL-3).
 */
function readResult(result, label) {
  if (typeof result !== "object" || result === null) throw invalidResult(label)
  const issues = result.issues
  if (issues !== undefined) {
    // A failure must say why: an empty or malformed list is a broken validator.
    if (!Array.isArray(issues) || issues.length === 0 || !issues.every(isIssue)) {
      throw new TypeError(`${label} returned invalid Standard Schema issues`)
    }
    return { issues, ok: false }
  }
  if (!("value" in result)) throw new TypeError(`${label} returned a success result without a value`)
  return { ok: true, value: result.value }
}

function callValidate(captured, value) {
  return captured.validate.call(captured.props, value)
}

/**
 * Validates `value` with a captured schema, masked. Returns the read result (see readResult),
 * or a Promise of it when the validator is asynchronous. Throws (or rejects with) what the
 * validator threw, or the TypeError for a malformed result.
 */
export function validate(captured, value) {
  return readValidation(captured, masked(callValidate, captured, value))
}

/** `validate` for a caller that already runs with component evaluation masked. */
export function validateMasked(captured, value) {
  return readValidation(captured, callValidate(captured, value))
}

function readValidation(captured, result) {
  if (result !== null && typeof result === "object" && typeof result.then === "function") {
    return Promise.resolve(result).then((settled) => readResult(settled, captured.label))
  }
  return readResult(result, captured.label)
}
