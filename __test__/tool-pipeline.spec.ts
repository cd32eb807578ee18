// Tool execution semantics (INVENTORY TL-3, TL-5) through the public low-level
// `execute(input, context)`: transport normalisation, input validation (the executor never
// runs on invalid input), output validation (after the effect) and the JSON snapshot.
import * as v from "valibot"
import { toStandardJsonSchema } from "@valibot/to-json-schema"
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { defineTool, ToolInputError, ToolOutputError } from "@aml-jsx/sdk"

import { anyObject, customSchema, deepArray, expectError, failureOf, nonJsonCases } from "./support/schemas.js"

const context = () => ({ signal: new AbortController().signal, trace: { runId: "run", spanId: "span" } })

/** A Tool over `input` whose executor records what it received. */
function recording(input: any, options: Record<string, unknown> = {}) {
  const calls: unknown[] = []
  const tool = defineTool({
    description: "Record the input",
    execute: (value: unknown) => {
      calls.push(value)
      return (options.result ?? { ok: true }) as never
    },
    input,
    name: "record",
    ...options,
  })
  return { calls, tool }
}

describe("input (TL-3 steps 1–5)", () => {
  it("uses a valid value unchanged and hands the executor the schema output", async () => {
    const { calls, tool } = recording(z.object({ n: z.string().transform((s) => s.length) }))
    await expect(tool.execute({ n: "four" }, context())).resolves.toEqual({ ok: true })
    expect(calls).toEqual([{ n: 4 }])
  })

  it.each(nonJsonCases().filter(([name]) => name !== "undefined"))(
    "rejects %s with ToolInputError before the executor runs",
    async (_, input, cause) => {
      const { calls, tool } = recording(anyObject)
      const error = await failureOf(() => tool.execute(input, context()))
      expectError(error, ToolInputError, 'Tool "record" input is not valid JSON')
      expectError(error.cause, TypeError, `Tool input contains ${cause}`)
      expect(calls).toEqual([])
    },
  )

  it("uses {} for undefined input when {} validates", async () => {
    const { calls, tool } = recording(z.object({ note: z.string().optional() }))
    await tool.execute(undefined, context())
    expect(calls).toEqual([{}])
  })

  it("keeps undefined when the schema accepts undefined itself", async () => {
    // zod cannot express z.undefined() in JSON Schema, so the JSON half is hand-made.
    const { calls, tool } = recording(customSchema((value) => (value === undefined ? { value } : { issues: [{ message: "no" }] })))
    await tool.execute(undefined, context())
    expect(calls).toEqual([undefined])
  })

  it("fails undefined input with the first issues when {} does not validate either", async () => {
    const { calls, tool } = recording(z.object({ id: z.string() }))
    const error = await failureOf(() => tool.execute(undefined, context()))
    expectError(error, ToolInputError, 'Tool "record" input failed schema validation')
    expect(error.cause[0].message).toMatch(/expected object, received undefined/)
    expect(calls).toEqual([])
  })

  it("parses a rejected string as JSON exactly once", async () => {
    const { calls, tool } = recording(z.object({ id: z.string() }))
    await tool.execute('{"id":"A-42"}', context())
    expect(calls).toEqual([{ id: "A-42" }])
    // Doubly encoded: one parse gives a string, which is not decoded again.
    const error = await failureOf(() => tool.execute(JSON.stringify('{"id":"A-42"}'), context()))
    expectError(error, ToolInputError, 'Tool "record" input failed schema validation')
    expect(error.cause[0].message).toMatch(/expected object, received string/)
    expect(calls).toHaveLength(1)
  })

  it("does not parse a string the schema accepts directly", async () => {
    const { calls, tool } = recording(z.string())
    await tool.execute('"quoted"', context())
    expect(calls).toEqual(['"quoted"'])
  })

  it("reports a string that is neither valid nor JSON", async () => {
    const { calls, tool } = recording(z.object({ id: z.string() }))
    const error = await failureOf(() => tool.execute("{id:", context()))
    expectError(error, ToolInputError, 'Tool "record" input is neither valid directly nor valid JSON')
    expect(error.cause).toBeInstanceOf(SyntaxError)
    expect(calls).toEqual([])
  })

  it("gives the issues of the original value, not of the decoded one", async () => {
    const { tool } = recording(z.object({ id: z.string() }))
    const error = await failureOf(() => tool.execute('{"id":1}', context()))
    expectError(error, ToolInputError, 'Tool "record" input failed schema validation')
    expect(error.cause[0].message).toMatch(/received string/)
  })

  it("wraps a throwing validator as `input schema failed`", async () => {
    const boom = new Error("validator broke")
    const { calls, tool } = recording(
      customSchema(() => {
        throw boom
      }),
    )
    const error = await failureOf(() => tool.execute({}, context()))
    expectError(error, ToolInputError, 'Tool "record" input schema failed')
    expect(error.cause).toBe(boom)
    expect(calls).toEqual([])
  })

  const malformed = [
    ["a non-object result", 42, "Tool schema returned an invalid Standard Schema result"],
    ["a null result", null, "Tool schema returned an invalid Standard Schema result"],
    ["issues that are not an array", { issues: "bad" }, "Tool schema returned invalid Standard Schema issues"],
    ["an empty issue list", { issues: [] }, "Tool schema returned invalid Standard Schema issues"],
    ["issues without messages", { issues: [{ path: [] }] }, "Tool schema returned invalid Standard Schema issues"],
    ["success without a value", {}, "Tool schema returned a success result without a value"],
  ] as const

  it.each(malformed)("surfaces %s (sync and async) through `input schema failed`", async (_, result, message) => {
    for (const validate of [() => result, async () => result]) {
      const { calls, tool } = recording(customSchema(validate))
      const error = await failureOf(() => tool.execute({}, context()))
      expectError(error, ToolInputError, 'Tool "record" input schema failed')
      expectError(error.cause, TypeError, message)
      expect(calls).toEqual([])
    }
  })

  it("works with an asynchronous validator (valibot async pipeline)", async () => {
    // An async check has no JSON Schema form: pair the async validator with the JSON
    // Schema of its synchronous shape.
    const asyncSchema = v.pipeAsync(
      v.object({ id: v.string() }),
      v.checkAsync(async (value) => value.id !== "taken", "id is taken"),
    )
    const shape = toStandardJsonSchema(v.object({ id: v.string() }))
    const schema = { "~standard": { ...asyncSchema["~standard"], jsonSchema: shape["~standard"].jsonSchema } }
    const { calls, tool } = recording(schema)
    await tool.execute({ id: "free" }, context())
    const error = await failureOf(() => tool.execute({ id: "taken" }, context()))
    expectError(error, ToolInputError, 'Tool "record" input failed schema validation')
    expect(error.cause[0].message).toBe("id is taken")
    expect(calls).toEqual([{ id: "free" }])
  })
})

describe("output (TL-3)", () => {
  it("validates with the output schema after the effect, applying its transformation", async () => {
    const effects: string[] = []
    const tool = defineTool({
      description: "Total",
      execute: () => {
        effects.push("charged")
        return { total: "12" }
      },
      input: z.object({}),
      name: "total",
      output: z.object({ total: z.string().transform(Number) }),
    })
    await expect(tool.execute({}, context())).resolves.toEqual({ total: 12 })
    expect(effects).toEqual(["charged"])
  })

  it("fails schema-invalid output after the executor ran", async () => {
    let ran = 0
    const tool = defineTool({
      description: "Bad total",
      execute: () => {
        ran++
        return { total: "n/a" } as never
      },
      input: z.object({}),
      name: "total",
      output: z.object({ total: z.number() }),
    })
    const error = await failureOf(() => tool.execute({}, context()))
    expectError(error, ToolOutputError, 'Tool "total" output failed schema validation')
    expect(error.cause[0].path).toEqual(["total"])
    expect(ran).toBe(1)
  })

  it("wraps a throwing or malformed output schema as `output schema failed`", async () => {
    const boom = new Error("output validator broke")
    for (const [validate, cause] of [
      [() => { throw boom }, boom],
      [() => 7, undefined],
    ] as const) {
      const tool = defineTool({ description: "d", execute: () => ({}), input: z.object({}), name: "out", output: customSchema(validate, null) })
      const error = await failureOf(() => tool.execute({}, context()))
      expectError(error, ToolOutputError, 'Tool "out" output schema failed')
      if (cause === undefined) expectError(error.cause, TypeError, "Tool schema returned an invalid Standard Schema result")
      else expect(error.cause).toBe(cause)
    }
  })

  it.each(nonJsonCases())("rejects %s output as not valid JSON", async (_, result, cause) => {
    const tool = defineTool({ description: "d", execute: () => result as never, input: z.object({}), name: "out" })
    const error = await failureOf(() => tool.execute({}, context()))
    expectError(error, ToolOutputError, 'Tool "out" output is not valid JSON')
    expectError(error.cause, TypeError, `Tool output contains ${cause}`)
  })

  it("snapshots output: deeply frozen, sorted keys, __proto__ kept as data, no -0", async () => {
    const shared = { leaf: true }
    const result = JSON.parse('{"b":1,"a":{"__proto__":{"polluted":true}},"z":[1,2]}')
    result.left = shared
    result.right = shared
    result.zero = -0
    const tool = defineTool({ description: "d", execute: () => result, input: z.object({}), name: "out" })
    const output: any = await tool.execute({}, context())
    expect(Object.keys(output)).toEqual(["a", "b", "left", "right", "z", "zero"])
    expect(Object.isFrozen(output) && Object.isFrozen(output.a) && Object.isFrozen(output.z)).toBe(true)
    expect(Object.prototype.hasOwnProperty.call(output.a, "__proto__")).toBe(true)
    expect(Object.getPrototypeOf(output.a)).toBe(Object.prototype)
    expect(({} as any).polluted).toBeUndefined()
    expect(output.left).toEqual({ leaf: true })
    expect(Object.is(output.zero, 0)).toBe(true)
    result.b = 2
    expect(output.b).toBe(1)
  })

  it("snapshots 100,000-deep output without exhausting the stack", async () => {
    const tool = defineTool({ description: "d", execute: () => deepArray(100_000, "end") as never, input: z.object({}), name: "deep" })
    let value: any = await tool.execute({}, context())
    let depth = 0
    while (Array.isArray(value)) {
      value = value[0]
      depth++
    }
    expect([depth, value]).toEqual([100_000, "end"])
  })

  it("rethrows what the executor throws, unchanged", async () => {
    const boom = new RangeError("executor failed")
    const tool = defineTool({ description: "d", execute: () => { throw boom }, input: z.object({}), name: "boom" })
    expect(await failureOf(() => tool.execute({}, context()))).toBe(boom)
  })

  it("hands the executor the context it was given", async () => {
    const seen: unknown[] = []
    const tool = defineTool({ description: "d", execute: (_: unknown, ctx: unknown) => (seen.push(ctx), null), input: z.object({}), name: "ctx" })
    const given = context()
    await tool.execute({}, given)
    expect(seen).toEqual([given])
  })

  it("rejects with the abort reason when the context signal aborts mid-call", async () => {
    const controller = new AbortController()
    const tool = defineTool({ description: "d", execute: () => new Promise<never>(() => {}), input: z.object({}), name: "hang" })
    const call = tool.execute({}, { signal: controller.signal, trace: { runId: "r", spanId: "s" } })
    const reason = new Error("stop")
    controller.abort(reason)
    expect(await failureOf(() => call)).toBe(reason)
  })
})
