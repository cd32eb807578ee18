// defineTool() (INVENTORY TL-1, TL-3, docs-next callable Tools).
//
// The returned value is a frozen function object: calling it (`tool(input)`) runs the Tool
// from inside an active AML component under a `tool` span; its members form the
// ToolDefinition (own `name`, `description`, `inputSchema`, `kind`, non-enumerable
// `__amlTool`, and `execute` from a shared frozen prototype). Its exact identity is registered in the realm Tool registry with a private
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
//   invokeDirect(snapshot, context)  the same, but frozen JSON itself when every step was
//                                    synchronous, and failures thrown synchronously there
//                                    (newer copies; callers fall back to invoke)
//   run(input, context)              snapshotInput, invoke, raced against context.signal
//                                    (the public execute)

import { storage } from "../core/component-scope.js"
import { EvaluationError, TOOLS_ONLY_ACTIVE, ToolInputError, ToolOutputError } from "../errors/errors.js"
import { captureSchema, generateJsonSchema, requireJsonSchema, validate, validateMasked } from "../schema/standard-schema.js"
import { snapshotJson } from "../schema/stable-json.js"
import { settle } from "../core/thenable.js"
import { isNormalized } from "../checks/normalized.js"
import { raceSignal } from "./instrumentation.js"
import { toolRegistry } from "./registry.js"

const EMPTY_INPUT = Object.freeze({})


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

  /**
   * Validates with the input schema. Returns the read result, or a Promise of it for an
   * asynchronous validator, so the common synchronous case costs no extra microtasks.
   * A throwing or malformed validator becomes a ToolInputError.
   */
  check(value, inMask) {
    let result
    try {
      result = inMask ? validateMasked(this.input, value) : validate(this.input, value)
    } catch (cause) {
      throw this.inputSchemaFailed(cause)
    }
    if (!(result instanceof Promise)) return result
    return result.then(undefined, (cause) => {
      throw this.inputSchemaFailed(cause)
    })
  }

  inputSchemaFailed(cause) {
    return new ToolInputError(`Tool "${this.name}" input schema failed`, { cause })
  }

  /** TL-3 steps 3–5, after the value itself failed: `{}` for undefined, one JSON.parse. */
  async retry(value, first) {
    let candidate
    if (value === undefined) {
      candidate = EMPTY_INPUT
    } else if (typeof value === "string") {
      try {
        candidate = snapshotJson(JSON.parse(value), "Tool input")
      } catch (cause) {
        throw new ToolInputError(`Tool "${this.name}" input is neither valid directly nor valid JSON`, { cause })
      }
    }
    if (candidate !== undefined) {
      const second = await this.check(candidate)
      if (second.ok) return second.value
    }
    throw new ToolInputError(`Tool "${this.name}" input failed schema validation`, { cause: first.issues })
  }

  /** The output schema's read result, or a Promise of it (like `check`). */
  checkOutput(raw, inMask) {
    const failed = (cause) => new ToolOutputError(`Tool "${this.name}" output schema failed`, { cause })
    let result
    try {
      result = inMask ? validateMasked(this.output, raw) : validate(this.output, raw)
    } catch (cause) {
      throw failed(cause)
    }
    if (!(result instanceof Promise)) return this.acceptOutput(result)
    return result.then(
      (read) => this.acceptOutput(read),
      (cause) => {
        throw failed(cause)
      },
    )
  }

  acceptOutput(result) {
    if (!result.ok) {
      throw new ToolOutputError(`Tool "${this.name}" output failed schema validation`, { cause: result.issues })
    }
    return result.value
  }

  /** The transport snapshot of the executor's (validated) result. */
  snapshotOutput(value) {
    try {
      return snapshotJson(value, "Tool output")
    } catch (cause) {
      throw new ToolOutputError(`Tool "${this.name}" output is not valid JSON`, { cause })
    }
  }

  /**
   * TL-3 after the input snapshot: validate, execute, validate the output, snapshot it.
   * Returns the output snapshot, or a Promise of it when a validator or the executor is
   * asynchronous; a synchronous Tool thus costs no promise here. Failures are thrown
   * synchronously on the synchronous path: callers (runToolSpan, run) turn them into
   * rejections. `inMask`: the caller already masks component evaluation (runToolSpan), so
   * the validators need no masking of their own.
   */
  pipeline(snapshot, context, inMask = false) {
    // TL-3 step 2: a value that satisfies the schema is used unchanged.
    const first = this.check(snapshot, inMask)
    if (first instanceof Promise || !first.ok) return this.pipelineAfterRetry(snapshot, first, context)
    return this.executeWith(first.value, context, inMask)
  }

  /** The port's `invoke`: the pipeline's outcome, always as a Promise. */
  invoke(snapshot, context) {
    try {
      return Promise.resolve(this.pipeline(snapshot, context))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async pipelineAfterRetry(snapshot, pending, context) {
    const first = await pending
    const input = first.ok ? first.value : await this.retry(snapshot, first)
    return this.executeWith(input, context)
  }

  executeWith(input, context, inMask = false) {
    // Only now, with valid input, does the authored executor run.
    const value = this.execute.call(undefined, input, context)
    if (value !== null && (typeof value === "object" || typeof value === "function")) {
      // What `await` would do: `then` read once, a thenable adopted in a later microtask.
      const then = value.then
      // A later microtask runs unmasked: validate with the mask again.
      if (typeof then === "function") return settle(value, then).then((settled) => this.finishOutput(settled, false))
    }
    return this.finishOutput(value, inMask)
  }

  finishOutput(value, inMask) {
    if (this.output === undefined) return this.snapshotOutput(value)
    const checked = this.checkOutput(value, inMask)
    return checked instanceof Promise ? checked.then((valid) => this.snapshotOutput(valid)) : this.snapshotOutput(checked)
  }

  /**
   * The public execute(): rejects with the abort reason as soon as the context's signal
   * aborts, even if the executor ignores it. (Evaluation-owned calls race in
   * lib/tools/instrumentation.js instead, through the domain's single abort listener.)
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
    let running
    try {
      running = this.pipeline(snapshot, context)
    } catch (error) {
      return Promise.reject(error)
    }
    if (!(running instanceof Promise)) return Promise.resolve(running)
    return signal instanceof AbortSignal ? raceSignal(running, signal) : running
  }
}

function createPort(name, description, inputSchema, validInputSchema, pipeline) {
  return Object.freeze({
    description,
    inputSchema,
    invoke: (snapshot, context) => pipeline.invoke(snapshot, context),
    // Called masked (runToolSpan), so the validators skip their own masking.
    invokeDirect: (snapshot, context) => pipeline.pipeline(snapshot, context, true),
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

/**
 * The public `execute` every callable Tool of this copy shares. It resolves its port from the
 * exact receiver, so on an object derived from a Tool it rejects: `<Tool use>` refuses such
 * a non-registered lookalike before anything is called.
 */
function execute(input, context) {
  const port = toolRegistry.get(this)
  if (port === undefined) {
    return Promise.reject(new TypeError("Tool execute() must be called on a Tool returned by defineTool()"))
  }
  return port.run(input, context)
}

/**
 * The frozen prototype of every callable Tool. `execute` is an accessor rather than a data
 * member: an inherited non-writable data property would make `obj.execute = f` throw on every
 * object derived from a Tool (`Object.assign(Object.create(tool), { execute })`), which plain
 * objects allow. The setter gives the receiver its own member, so a derived object can be
 * built; on a Tool itself (frozen) that definition fails, so a Tool stays immutable.
 */
const TOOL_PROTOTYPE = Object.freeze(
  Object.create(Function.prototype, {
    execute: {
      get() {
        return execute
      },
      set(value) {
        Object.defineProperty(this, "execute", { configurable: true, enumerable: true, value, writable: true })
      },
    },
  }),
)

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
  Object.setPrototypeOf(tool, TOOL_PROTOTYPE)
  Object.defineProperty(tool, "__amlTool", { value: true })
  Object.freeze(tool)
  toolRegistry.set(tool, port)
  return tool
}
