// Structured responses (INVENTORY SO-1): every response error, the schema output with
// transformations, masked validation, the structured-output service for provider helpers,
// tracing of the accepted JSON, and join semantics.
import * as v from "valibot"
import { toStandardJsonSchema } from "@valibot/to-json-schema"
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { customSchema, expectError, failureOf } from "./support/schemas.js"

const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

/** Runs `evaluate(<Agent>q</Agent>, schema)` against a provider returning `response`. */
async function answer(response: unknown, schema: unknown = z.object({ n: z.number() })) {
  const provider = { name: "p", run: async () => (typeof response === "function" ? response() : response) }
  async function Probe() {
    const value = await evaluate(<Agent>q</Agent>, schema as never)
    return JSON.stringify(value)
  }
  return new AmlRuntime({ agentProvider: provider as never }).evaluate(<Probe />)
}

describe("response errors (SO-1)", () => {
  it("omitted structured output: the property is absent", async () => {
    expectError(await failureOf(() => answer({ text: "{\"n\":1}" })), EvaluationError, 'Agent "p" (span-1) omitted structured output')
    // Present through the prototype counts as present (Reflect.has).
    const inherited = Object.create({ structured: { n: 1 } })
    await expect(answer(inherited)).resolves.toBe('{"n":1}')
  })

  it("an invalid structured response: the getter throws", async () => {
    const boom = new Error("getter broke")
    const response = {
      get structured() {
        throw boom
      },
      text: "",
    }
    const error = await failureOf(() => answer(response))
    expectError(error, EvaluationError, 'Agent "p" (span-1) returned an invalid structured response')
    expect(error.cause).toBe(boom)
  })

  it.each([
    ["undefined", undefined, "unsupported undefined data"],
    ["a BigInt", { n: 1n }, "unsupported bigint data"],
    ["a cycle", (() => { const o: any = { n: 1 }; o.o = o; return o })(), "a cycle"],
    ["a Map", new Map(), "a non-plain object"],
  ])("invalid structured output: %s is not JSON", async (_, structured, cause) => {
    const error = await failureOf(() => answer({ structured, text: "" }))
    expectError(error, EvaluationError, 'Agent "p" (span-1) returned invalid structured output')
    expectError(error.cause, TypeError, "Agent structured output is not valid JSON")
    expectError(error.cause.cause, TypeError, `Agent structured output contains ${cause}`)
  })

  it("invalid structured output: schema validation fails, with the issues", async () => {
    const error = await failureOf(() => answer({ structured: { n: "1" }, text: "" }))
    expectError(error, EvaluationError, 'Agent "p" (span-1) returned invalid structured output')
    expectError(error.cause, TypeError, "Agent structured output failed schema validation")
    expect(error.cause.cause[0]).toMatchObject({ code: "invalid_type", path: ["n"] })
  })

  it("invalid structured output: a throwing or malformed validator", async () => {
    const boom = new Error("validator broke")
    const throwing = await failureOf(() => answer({ structured: {}, text: "" }, customSchema(() => { throw boom })))
    expectError(throwing, EvaluationError, 'Agent "p" (span-1) returned invalid structured output')
    expect(throwing.cause).toBe(boom)
    const malformed = await failureOf(() => answer({ structured: {}, text: "" }, customSchema(async () => ({ issues: [] }))))
    expectError(malformed.cause, TypeError, "Agent output schema returned invalid Standard Schema issues")
  })

  it.each([null, 42, "text"])("an invalid response: %j", async (response) => {
    expectError(await failureOf(() => answer(response)), EvaluationError, 'Agent "p" (span-1) returned an invalid response')
  })

  it("a provider failure is wrapped as usual", async () => {
    const boom = new Error("provider down")
    const error = await failureOf(() => answer(() => Promise.reject(boom)))
    expectError(error, EvaluationError, 'Agent "p" (span-1) failed')
    expect(error.cause).toBe(boom)
  })
})

describe("the resolved value (SO-1)", () => {
  it("is the schema output: zod transformations apply", async () => {
    const schema = z.object({ at: z.string().transform((s) => s.toUpperCase()), n: z.number().pipe(z.transform((n) => n * 10)) })
    await expect(answer({ structured: { at: "noon", n: 4 }, text: "" }, schema)).resolves.toBe('{"at":"NOON","n":40}')
  })

  it("is the schema output: valibot transformations and async validators apply", async () => {
    const schema = toStandardJsonSchema(v.object({ words: v.pipe(v.string(), v.transform((s) => s.split(" "))) }))
    await expect(answer({ structured: { words: "a b" }, text: "" }, schema)).resolves.toBe('{"words":["a","b"]}')
    const slow = customSchema(async (value) => ({ value: { wrapped: value } }))
    await expect(answer({ structured: 7, text: "" }, slow)).resolves.toBe('{"wrapped":7}')
  })

  it("validates a frozen snapshot, not the provider's live object", async () => {
    const live = { n: 1 }
    const seen: unknown[] = []
    const schema = customSchema((value) => (seen.push(value), { value }))
    await answer({ structured: live, text: "" }, schema)
    expect(seen[0]).toEqual(live)
    expect(seen[0]).not.toBe(live)
    expect(Object.isFrozen(seen[0])).toBe(true)
  })

  it("runs validation and response getters masked", async () => {
    const messages: string[] = []
    const attempt = () => {
      try {
        void evaluate("x")
      } catch (error) {
        messages.push((error as Error).message)
      }
    }
    const schema = customSchema((value) => (attempt(), { value }))
    const response = {
      get structured() {
        attempt()
        return 1
      },
      text: "",
    }
    await expect(answer(response, schema)).resolves.toBe("1")
    expect(messages).toEqual([ONLY_ACTIVE, ONLY_ACTIVE])
  })
})

describe("around the structured Agent", () => {
  it("records the accepted JSON as the Agent span's content output", async () => {
    const content: any[] = []
    const plain: any[] = []
    const provider = { name: "p", run: async () => ({ structured: { n: 2 }, text: "" }) }
    const runtime = new AmlRuntime({ agentProvider: provider })
    runtime.on("trace", Object.assign((event: any) => void content.push(event), { captureContent: true }))
    runtime.on("trace", (event) => void plain.push(event))
    async function Probe() {
      return String((await evaluate(<Agent>q</Agent>, z.object({ n: z.number() }))).n)
    }
    await expect(runtime.evaluate(<Probe />)).resolves.toBe("2")
    const end = (events: any[]) => events.find((e) => e.type === "span.end" && e.kind === "agent")
    expect(end(content).attributes.output).toBe('{"n":2}')
    expect(end(plain).attributes.output).toBeUndefined()
  })

  it("offers providers a structured-output service keyed by their context", async () => {
    const services = (globalThis as any)[Symbol.for("@aml-jsx/sdk/agent-structured-output-services")] as WeakMap<object, any>
    const outcomes: unknown[] = []
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const service = services.get(context)
        expect(service.jsonSchema).toBe(request.output.jsonSchema)
        outcomes.push(await service.validate({ n: "x" }).catch((e: Error) => e.message))
        outcomes.push(await service.validate({ n: 3 }))
        return { structured: { n: 3 }, text: "" }
      },
    }
    const plainContexts: unknown[] = []
    const textProvider = { name: "t", run: async (_: unknown, context: unknown) => (plainContexts.push(services.get(context)), { text: "" }) }
    async function Probe() {
      await evaluate(<Agent provider={textProvider}>t</Agent>)
      return String((await evaluate(<Agent>q</Agent>, z.object({ n: z.number() }))).n)
    }
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Probe />)).resolves.toBe("3")
    expect(outcomes).toEqual(["Agent structured output failed schema validation", { n: 3 }])
    expect(plainContexts).toEqual([undefined])
  })

  it("joins an unawaited structured evaluation before the component completes", async () => {
    const done: string[] = []
    const provider = { name: "p", run: async () => (await new Promise((r) => setTimeout(r, 10)), done.push("agent"), { structured: 1, text: "" }) }
    function Fire() {
      void evaluate(<Agent>q</Agent>, z.number())
      return "fired"
    }
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Fire />)).resolves.toBe("fired")
    expect(done).toEqual(["agent"])
  })

  it("runs concurrent structured evaluations independently", async () => {
    const provider = { name: "p", run: async (request: any) => ({ structured: { prompt: request.prompt }, text: "" }) }
    const schema = z.object({ prompt: z.string() })
    async function Both() {
      const results = await Promise.all([evaluate(<Agent>a</Agent>, schema), evaluate("plain"), evaluate(<Agent>b</Agent>, schema)])
      return JSON.stringify(results)
    }
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Both />)).resolves.toBe(
      '[{"prompt":"a"},"plain",{"prompt":"b"}]',
    )
  })

  it("is only available inside an active component", () => {
    expect(() => evaluate(<Agent>q</Agent>, z.number())).toThrow(ONLY_ACTIVE)
  })
})
