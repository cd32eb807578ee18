// defineTool() (INVENTORY TL-1): option validation, schema capture, the returned
// definition's shape and the realm registry. Execution semantics are in tool-pipeline.spec.
import { type } from "arktype"
import * as v from "valibot"
import { toStandardJsonSchema } from "@valibot/to-json-schema"
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, Tool, defineTool } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { anything, customSchema, expectError, failureOf, Point } from "./support/schemas.js"

const base = () => ({
  description: "Echo the input",
  execute: (input: unknown) => input as never,
  input: z.object({ id: z.string() }),
  name: "echo",
})

function defineError(options: unknown): any {
  try {
    defineTool(options as never)
  } catch (error) {
    return error
  }
  throw new Error("defineTool accepted the options")
}

describe("option validation (TL-1)", () => {
  it.each([undefined, null, "tool", 1, true])("options %s must be an object", (options) => {
    expectError(defineError(options), TypeError, "defineTool options must be an object")
  })

  it.each([undefined, "", " echo", "echo\n", 1])("rejects the name %j", (name) => {
    expectError(defineError({ ...base(), name }), TypeError, "Tool name must be a non-empty normalized string")
  })

  it.each([undefined, "", "desc ", 2])("rejects the description %j", (description) => {
    expectError(
      defineError({ ...base(), description }),
      TypeError,
      "Tool description must be a non-empty normalized string",
    )
  })

  it("requires execute to be a function", () => {
    expectError(defineError({ ...base(), execute: "run" }), TypeError, "Tool execute must be a function")
  })

  const contract = [
    ["missing", undefined, "Tool schema must be an object"],
    ["null", null, "Tool schema must be an object"],
    ["a string", "z.object()", "Tool schema must be an object"],
    ["without ~standard", {}, "Tool schema must implement Standard Schema"],
    ["with a primitive ~standard", { "~standard": 1 }, "Tool schema must implement Standard Schema"],
    ["version 2", { "~standard": { validate() {}, vendor: "x", version: 2 } }, "Tool schema has an invalid Standard Schema contract"],
    ["an empty vendor", { "~standard": { validate() {}, vendor: "", version: 1 } }, "Tool schema has an invalid Standard Schema contract"],
    ["no validate", { "~standard": { vendor: "x", version: 1 } }, "Tool schema has an invalid Standard Schema contract"],
  ] as const

  it.each(contract)("input schema %s", (_, input, message) => {
    expectError(defineError({ ...base(), input }), TypeError, message)
  })

  it.each(contract.slice(1))("output schema %s", (_, output, message) => {
    expectError(defineError({ ...base(), output }), TypeError, message)
  })

  it("requires Standard JSON Schema on the input schema only", () => {
    expectError(defineError({ ...base(), input: v.object({ id: v.string() }) }), TypeError, "Tool schema must implement Standard JSON Schema")
    expectError(defineError({ ...base(), input: customSchema(() => ({ value: 1 }), null) }), TypeError, "Tool schema must implement Standard JSON Schema")
    expect(() => defineTool({ ...base(), output: v.object({ id: v.string() }) })).not.toThrow()
  })

  it("checks in the documented order: name, description, execute, input, output", () => {
    expect(defineError({ description: 1, execute: 1, input: 1, name: 1 }).message).toBe(
      "Tool name must be a non-empty normalized string",
    )
    expect(defineError({ description: 1, execute: 1, input: 1, name: "n" }).message).toBe(
      "Tool description must be a non-empty normalized string",
    )
    expect(defineError({ description: "d", execute: 1, input: 1, name: "n" }).message).toBe("Tool execute must be a function")
    expect(defineError({ ...base(), input: 1, output: 1 }).message).toBe("Tool schema must be an object")
  })

  it("reads each option exactly once, through getters too", () => {
    const reads: string[] = []
    const values: Record<string, unknown> = base()
    const options = {}
    for (const key of ["name", "description", "execute", "input", "output"]) {
      Object.defineProperty(options, key, {
        get() {
          reads.push(key)
          return values[key]
        },
      })
    }
    defineTool(options as never)
    expect(reads.sort()).toEqual(["description", "execute", "input", "name", "output"])
  })
})

describe("input JSON Schema (TL-1)", () => {
  it("wraps a throwing converter as `input JSON Schema is invalid` with the cause", () => {
    const boom = new Error("no JSON Schema for you")
    const input = customSchema(anything["~standard"].validate, () => {
      throw boom
    })
    const error = defineError({ ...base(), input })
    expectError(error, TypeError, 'Tool "echo" input JSON Schema is invalid')
    expect(error.cause).toBe(boom)
  })

  it("reports schemas a real library cannot express in JSON Schema", () => {
    for (const input of [z.undefined(), toStandardJsonSchema(v.pipe(v.string(), v.check((s) => s !== "x")))]) {
      const error = defineError({ ...base(), input })
      expectError(error, TypeError, 'Tool "echo" input JSON Schema is invalid')
      expect(error.cause).toBeInstanceOf(Error)
    }
  })

  it("rejects a converter result that is not JSON, with the snapshot cause", () => {
    const input = customSchema(anything["~standard"].validate, () => ({ type: "object", default: new Point(1, 2) }))
    const error = defineError({ ...base(), input })
    expectError(error, TypeError, 'Tool "echo" input JSON Schema is invalid')
    expectError(error.cause, TypeError, "Tool schema JSON Schema contains a non-plain object")
  })

  it.each([null, [], "object", 3])("rejects the non-object document %j", (document) => {
    const input = customSchema(anything["~standard"].validate, () => document)
    expectError(defineError({ ...base(), input }), TypeError, 'Tool "echo" input JSON Schema must be an object')
  })

  it("asks for draft 2020-12 and snapshots the result deeply frozen and key-sorted", () => {
    const targets: unknown[] = []
    const document = { type: "object", properties: { b: { type: "string" }, a: { type: "number" } } }
    const input = customSchema(anything["~standard"].validate, (options?: unknown) => {
      targets.push(options)
      return document
    })
    const tool = defineTool({ ...base(), input })
    expect(targets).toEqual([{ target: "draft-2020-12" }])
    expect(tool.inputSchema).toEqual(document)
    expect(tool.inputSchema).not.toBe(document)
    expect(Object.keys(tool.inputSchema)).toEqual(["properties", "type"])
    expect(Object.keys(tool.inputSchema.properties as object)).toEqual(["a", "b"])
    expect(Object.isFrozen(tool.inputSchema)).toBe(true)
    expect(Object.isFrozen(tool.inputSchema.properties)).toBe(true)
    document.type = "string"
    expect(tool.inputSchema.type).toBe("object")
  })

  it("produces the same JSON Schema for zod, valibot and arktype", () => {
    const fromZod = defineTool({ ...base(), input: z.object({ id: z.string() }) }).inputSchema
    const fromValibot = defineTool({ ...base(), input: toStandardJsonSchema(v.object({ id: v.string() })) }).inputSchema
    const fromArktype = defineTool({ ...base(), input: type({ id: "string" }) }).inputSchema
    for (const schema of [fromZod, fromValibot, fromArktype]) {
      expect(schema).toMatchObject({ properties: { id: { type: "string" } }, required: ["id"], type: "object" })
    }
  })
})

describe("the returned Tool (TL-1, docs-next callable Tools)", () => {
  it("is a frozen callable ToolDefinition with a non-enumerable __amlTool brand", () => {
    const tool = defineTool(base())
    expect(typeof tool).toBe("function")
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.keys(tool)).toEqual(["name", "description", "inputSchema", "kind"])
    expect(tool.name).toBe("echo")
    expect(tool.description).toBe("Echo the input")
    expect(tool.kind).toBe("javascript")
    expect(typeof tool.execute).toBe("function")
    expect(tool.__amlTool).toBe(true)
    expect(Object.getOwnPropertyDescriptor(tool, "__amlTool")).toEqual({
      configurable: false,
      enumerable: false,
      value: true,
      writable: false,
    })
    expect("prototype" in tool).toBe(false)
  })

  it("keeps execute on one shared frozen prototype, not as an own member (§2.13)", async () => {
    const a = defineTool(base())
    const b = defineTool({ ...base(), name: "other" })
    expect(Object.hasOwn(a, "execute")).toBe(false)
    expect(Object.getPrototypeOf(a)).toBe(Object.getPrototypeOf(b))
    expect(Object.isFrozen(Object.getPrototypeOf(a))).toBe(true)
    expect(a.execute).toBe(b.execute)
    expect(a.execute).toBeTypeOf("function")
    await expect(b.execute({ id: "B" }, undefined as never)).resolves.toEqual({ id: "B" })
  })

  it("derived objects can be built but are not Tools: execute() rejects and <Tool use> refuses them", async () => {
    const tool = defineTool(base())
    const derived = Object.create(tool)
    Object.defineProperty(derived, "description", { value: "changed" })
    derived.extra = 1
    expect(derived.name).toBe("echo")
    expect(derived.description).toBe("changed")
    expectError(await failureOf(() => derived.execute({ id: "x" }, undefined)), TypeError, "Tool execute() must be called on a Tool returned by defineTool()")
    const { execute } = tool
    expectError(await failureOf(() => execute({ id: "x" }, undefined as never)), TypeError, "Tool execute() must be called on a Tool returned by defineTool()")
    const provider = { name: "p", run: async () => ({ text: "ran" }) }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const error = await failureOf(() => runtime.evaluate(jsx(Agent, { children: [jsx(Tool, { use: derived }), "go"] })))
    expectError(error, EvaluationError, "<Tool use> must be a JavaScript Tool")
  })

  it("lets a derived object take its own execute by assignment, and <Tool use> still refuses it uncalled", async () => {
    const tool = defineTool(base())
    let called = 0
    const own = async () => {
      called += 1
      return "bypass"
    }
    // Object.assign sets through [[Set]]: an inherited read-only execute would throw here.
    const derived = Object.assign(Object.create(tool), { execute: own })
    expect(Object.getOwnPropertyDescriptor(derived, "execute")).toEqual({ configurable: true, enumerable: true, value: own, writable: true })
    expect(tool.execute).not.toBe(own)
    const runtime = new AmlRuntime({ agentProvider: { name: "p", run: async () => ({ text: "ran" }) } })
    for (const lookalike of [derived, { ...tool, execute: own }, new Proxy(tool, {})]) {
      const error = await failureOf(() => runtime.evaluate(jsx(Agent, { children: [jsx(Tool, { use: lookalike }), "go"] })))
      expectError(error, EvaluationError, "<Tool use> must be a JavaScript Tool")
    }
    expect(called).toBe(0)
  })

  it("cannot be changed after definition", () => {
    const tool = defineTool(base()) as any
    expect(() => {
      tool.execute = () => "bypass"
    }).toThrow(TypeError)
    expect(() => {
      tool.inputSchema.type = "string"
    }).toThrow(TypeError)
  })

  it("execute() runs the full pipeline without an active component", async () => {
    const tool = defineTool(base())
    await expect(tool.execute({ id: "A-42" }, { signal: new AbortController().signal, trace: { runId: "r", spanId: "s" } })).resolves.toEqual({ id: "A-42" })
    const error = await failureOf(() => tool.execute({ id: 42 }, undefined as never))
    expect(error.name).toBe("ToolInputError")
  })

  it("keeps a Tool whose JSON Schema fails the draft 2020-12 meta-schema usable by the application", async () => {
    const input = customSchema(anything["~standard"].validate, () => ({ type: 12 }))
    const tool = defineTool({ ...base(), input })
    await expect(tool.execute({ id: "x" }, undefined as never)).resolves.toEqual({ id: "x" })
  })
})
