// defineTool() (INVENTORY TL-1, TL-3, docs-next callable Tools).
//
// The returned value is a frozen function object: calling it (`tool(input)`) runs the Tool
// from inside an active AML component under a `tool` span; its members form the
// ToolDefinition (`name`, `description`, `inputSchema`, `kind`, `execute`, non-enumerable
// `__amlTool`). Its exact identity is registered in the realm Tool registry with a private
// frozen execution port, so replacing or copying public members cannot bypass validation.
//
// Port protocol (shared by every physical SDK copy in the realm, keep it stable):
//   name, description, inputSchema   the captured definition
//   validInputSchema                 false when the JSON Schema is unfit to send to a model
//   snapshotInput(input)             stable JSON snapshot of transport input; throws
//                                    ToolInputError "input is not valid JSON"
//   invoke(snapshot, context)        normalise + validate input, execute, validate and
//                                    snapshot output → Promise of frozen JSON (not raced
//                                    against cancellation: the caller does that)
//   run(input, context)              snapshotInput, invoke, raced against context.signal
//                                    (the public execute)

import { storage } from "./component-scope.js"
import { EvaluationError, TOOLS_ONLY_ACTIVE, ToolInputError, ToolOutputError } from "./errors.js"
import { captureSchema, generateJsonSchema, requireJsonSchema, validate } from "./standard-schema.js"
import { snapshotJson } from "./stable-json.js"
import { raceSignal } from "./tool-instrumentation.js"
import { toolRegistry } from "./tool-registry.js"

const EMPTY_INPUT = Object.freeze({})

function isNormalized(value) {
  return typeof value === "string" && value.length > 0 && value === value.trim()
}

class ToolPipeline {
  constructor(name, inputSchema, outputSchema, execute) {
    this.name = name
    this.input = inputSchema
    this.output = outputSchema
    this.execute = execute
  }

  snapshotInput(input) {
    if (input === undefined) return undefined
    try {
      return snapshotJson(input, "Tool input")
    } catch (cause) {
      throw new ToolInputError(`Tool "${this.name}" input is not valid JSON`, { cause })
    }
  }

  /** Validates with the input schema; a throwing or malformed validator is a ToolInputError. */
  async check(value) {
    try {
      const result = validate(this.input, value)
      return result instanceof Promise ? await result : result
    } catch (cause) {
      throw new ToolInputError(`Tool "${this.name}" input schema failed`, { cause })
    }
  }

  /** TL-3 steps 2–5: the value the executor receives (the schema's output). */
  async normalise(value) {
    const first = await this.check(value)
    if (first.ok) return first.value
    if (value === undefined) {
      const empty = await this.check(EMPTY_INPUT)
      if (empty.ok) return empty.value
    } else if (typeof value === "string") {
      let decoded
      try {
        decoded = snapshotJson(JSON.parse(value), "Tool input")
      } catch (cause) {
        throw new ToolInputError(`Tool "${this.name}" input is neither valid directly nor valid JSON`, { cause })
      }
      const second = await this.check(decoded)
      if (second.ok) return second.value
    }
    throw new ToolInputError(`Tool "${this.name}" input failed schema validation`, { cause: first.issues })
  }

  async checkOutput(raw) {
    if (this.output === undefined) return raw
    let result
    try {
      result = validate(this.output, raw)
      if (result instanceof Promise) result = await result
    } catch (cause) {
      throw new ToolOutputError(`Tool "${this.name}" output schema failed`, { cause })
    }
    if (!result.ok) {
      throw new ToolOutputError(`Tool "${this.name}" output failed schema validation`, { cause: result.issues })
    }
    return result.value
  }

  async pipeline(snapshot, context) {
    const input = await this.normalise(snapshot)
    // Only now, with valid input, does the authored executor run.
    const raw = await this.execute.call(undefined, input, context)
    const value = await this.checkOutput(raw)
    try {
      return snapshotJson(value, "Tool output")
    } catch (cause) {
      throw new ToolOutputError(`Tool "${this.name}" output is not valid JSON`, { cause })
    }
  }

  /**
   * The public execute(): rejects with the abort reason as soon as the context's signal
   * aborts, even if the executor ignores it. (Evaluation-owned calls race in
   * tool-instrumentation.js instead, through the domain's single abort listener.)
   */
  run(input, context) {
    let snapshot
    let signal
    try {
      snapshot = this.snapshotInput(input)
      signal = context?.signal
    } catch (error) {
      return Promise.reject(error)
    }
    if (signal instanceof AbortSignal && signal.aborted) return Promise.reject(signal.reason)
    const running = this.pipeline(snapshot, context)
    return signal instanceof AbortSignal ? raceSignal(running, signal) : running
  }
}

function createPort(name, description, inputSchema, validInputSchema, pipeline) {
  return Object.freeze({
    description,
    inputSchema,
    invoke: (snapshot, context) => pipeline.pipeline(snapshot, context),
    name,
    run: (input, context) => pipeline.run(input, context),
    snapshotInput: (input) => pipeline.snapshotInput(input),
    validInputSchema,
  })
}

/** `tool(input)`: only from an active component, through that component's evaluation. */
function callActive(port, input) {
  const scope = storage.getStore()
  if (scope === undefined || scope === null || typeof scope.callTool !== "function") {
    throw new EvaluationError(TOOLS_ONLY_ACTIVE)
  }
  return scope.callTool(port, input)
}

function readOptions(options) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("defineTool options must be an object")
  }
  // Each option is read exactly once; getters cannot answer differently later.
  const name = Reflect.get(options, "name")
  const description = Reflect.get(options, "description")
  const execute = Reflect.get(options, "execute")
  const input = Reflect.get(options, "input")
  const output = Reflect.get(options, "output")
  if (!isNormalized(name)) throw new TypeError("Tool name must be a non-empty normalized string")
  if (!isNormalized(description)) throw new TypeError("Tool description must be a non-empty normalized string")
  if (typeof execute !== "function") throw new TypeError("Tool execute must be a function")
  const inputSchema = captureSchema(input, "Tool schema")
  requireJsonSchema(inputSchema)
  const outputSchema = output === undefined ? undefined : captureSchema(output, "Tool schema")
  return { description, execute, inputSchema, name, outputSchema }
}

/** Creates a validated, callable JavaScript Tool (see the header for its shape). */
export function defineTool(options) {
  const { description, execute, inputSchema, name, outputSchema } = readOptions(options)
  const generated = generateJsonSchema(inputSchema)
  if (generated.failure === "invalid") {
    throw new TypeError(`Tool "${name}" input JSON Schema is invalid`, { cause: generated.cause })
  }
  if (generated.failure === "object") throw new TypeError(`Tool "${name}" input JSON Schema must be an object`)
  const pipeline = new ToolPipeline(name, inputSchema, outputSchema, execute)
  // A document the meta-schema rejects still defines a Tool the application may call; only
  // granting it to an Agent, which would send the schema to a model, is refused (TL-2).
  const port = createPort(name, description, generated.snapshot, generated.problem === undefined, pipeline)
  // An arrow function has no `prototype`; `length` is removed and `name` replaced so the own
  // enumerable members are exactly those of a ToolDefinition.
  const tool = (input) => callActive(port, input)
  delete tool.length
  Object.defineProperty(tool, "name", { enumerable: true, value: name })
  tool.description = description
  tool.inputSchema = generated.snapshot
  tool.kind = "javascript"
  tool.execute = function execute(input, context) {
    return port.run(input, context)
  }
  Object.defineProperty(tool, "__amlTool", { value: true })
  Object.freeze(tool)
  toolRegistry.set(tool, port)
  return tool
}
