// Structured evaluate(value, schema) (INVENTORY SO-1, RT-2).
//
// The schema is captured when evaluate() is called; its TypeErrors reject the returned
// promise. The value then runs as a structured engine task (native.setStructured): the
// engine enforces "exactly one <Agent>" and "no text outside it". The task's controller,
// found by runAgent through domain.structuredFor(task), adds `request.output`, validates
// `response.structured` and keeps the schema's output value, which is what evaluate()
// resolves with (transformations included).
//
// Structured-output service (realm WeakMap keyed by the AgentExecutionContext, for provider
// helpers of any SDK copy, e.g. an ACP bridge that validates candidates as they arrive):
//   jsonSchema             the frozen JSON Schema sent in request.output
//   validate(candidate)    → Promise of the schema output; rejects with the TypeError
//                            "Agent structured output is not valid JSON" or
//                            "Agent structured output failed schema validation" (cause:
//                            issues), or with what a broken validator threw

import { masked } from "../core/component-scope.js"
import { runTask } from "../core/driver.js"
import { EvaluationError } from "../errors/errors.js"
import { captureSchema, generateJsonSchema, requireJsonSchema, validate } from "./standard-schema.js"
import { jsonText, snapshotJson } from "./stable-json.js"

const LABEL = "Agent output schema"

/** Captures the schema and its JSON Schema; throws the documented TypeErrors. */
function captureModelSchema(schema) {
  const captured = captureSchema(schema, LABEL)
  requireJsonSchema(captured)
  const generated = generateJsonSchema(captured)
  if (generated.failure === "invalid") {
    throw new TypeError("Agent output JSON Schema is invalid", { cause: generated.cause })
  }
  if (generated.failure === "object") throw new TypeError("Agent output JSON Schema must be an object")
  // Unlike a Tool's schema, this one is always sent to a model: an unusable document fails now.
  if (generated.problem !== undefined) {
    throw new TypeError("Agent output JSON Schema is invalid", { cause: new TypeError(generated.problem) })
  }
  return { captured, jsonSchema: generated.snapshot }
}

/** Snapshot + schema validation of one candidate: `{ snapshot, value }`, or throws. */
async function check(captured, candidate) {
  let snapshot
  try {
    snapshot = snapshotJson(candidate, "Agent structured output")
  } catch (cause) {
    throw new TypeError("Agent structured output is not valid JSON", { cause })
  }
  let result = validate(captured, snapshot)
  if (result instanceof Promise) result = await result
  if (!result.ok) throw new TypeError("Agent structured output failed schema validation", { cause: result.issues })
  return { snapshot, value: result.value }
}

class StructuredController {
  constructor(domain, captured, jsonSchema) {
    this.domain = domain
    this.captured = captured
    this.request = Object.freeze({ jsonSchema, type: "json" })
    this.accepted = false
    this.value = undefined
    this.snapshot = undefined
    this.service = Object.freeze({
      jsonSchema,
      validate: (candidate) => check(captured, candidate).then((checked) => checked.value),
    })
  }

  /**
   * Reads and validates `response.structured`; resolves with the schema output. Getters,
   * proxy traps and validators are user code: all of it runs masked (RT-2).
   */
  accept(response, label) {
    return masked(() => this.read(response, label))
  }

  async read(response, label) {
    if (typeof response !== "object" || response === null) {
      throw new EvaluationError(`${label} returned an invalid response`)
    }
    if (!Reflect.has(response, "structured")) throw new EvaluationError(`${label} omitted structured output`)
    let candidate
    try {
      candidate = response.structured
    } catch (cause) {
      throw new EvaluationError(`${label} returned an invalid structured response`, { cause })
    }
    let checked
    try {
      checked = await check(this.captured, candidate)
    } catch (cause) {
      throw new EvaluationError(`${label} returned invalid structured output`, { cause })
    }
    this.accepted = true
    this.value = checked.value
    this.snapshot = checked.snapshot
    return checked.value
  }

  /** The Agent span's sensitive `output`: the accepted JSON, serialised only when traced. */
  output() {
    return this.domain.traceContent ? (jsonText(this.snapshot) ?? "") : ""
  }
}

/**
 * Starts a structured evaluation of `value` from the component task `parentTask`.
 * Returns a promise of the schema's output.
 */
export function evaluateStructured(domain, parentTask, value, schema, env) {
  let model
  try {
    model = captureModelSchema(schema)
  } catch (error) {
    return Promise.reject(error)
  }
  if (domain.signal.aborted) return Promise.reject(domain.signal.reason)
  const native = domain.native
  const task = native.newTask(parentTask)
  native.setStructured(task)
  const controller = new StructuredController(domain, model.captured, model.jsonSchema)
  domain.structured.set(task, controller)
  // The id may already belong to a newer task when this runs: remove only our own entry.
  const forget = () => {
    if (domain.structured.get(task) === controller) domain.structured.delete(task)
  }
  return runTask(domain, task, value, env).then(
    () => {
      forget()
      if (!controller.accepted) throw new EvaluationError("Structured Agent completed without an evaluation collector")
      return controller.value
    },
    (error) => {
      forget()
      throw error
    },
  )
}
