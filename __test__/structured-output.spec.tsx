// Structured evaluate(value, schema) (INVENTORY SO-1, RT-2 structured overload): schema
// capture, the one-Agent shape, request.output on the final turn, response validation and
// the schema's output (transformations included), with zod, valibot and arktype.
import { type } from "arktype"
import * as v from "valibot"
import { toStandardJsonSchema } from "@valibot/to-json-schema"
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, FollowUp, System, evaluate } from "@aml-jsx/sdk"

import { anything, customSchema, expectError, failureOf, Point } from "./support/schemas.js"

const Finding = z.object({ severity: z.enum(["low", "high"]), summary: z.string() })

/** A provider answering structured requests with `structured` (or a response factory). */
function structuredProvider(answer: unknown) {
  const requests: any[] = []
  const provider = {
    name: "p",
    async run(request: any) {
      requests.push(request)
      if (typeof answer === "function") return answer(request)
      return request.output?.type === "json" ? { structured: answer, text: "" } : { text: `text:${request.prompt}` }
    },
  }
  return { provider, requests }
}

/** Evaluates `<Probe />`, which returns JSON of `evaluate(tree, schema)`. */
async function structured(tree: unknown, schema: unknown, answer: unknown = { severity: "high", summary: "s" }) {
  const { provider, requests } = structuredProvider(answer)
  async function Probe() {
    return JSON.stringify(await evaluate(tree as never, schema as never))
  }
  const runtime = new AmlRuntime({ agentProvider: provider })
  const outcome = await runtime.evaluate(<Probe />).then(
    (text) => ({ ok: true as const, value: JSON.parse(text) }),
    (error) => ({ error, ok: false as const }),
  )
  return { outcome, requests }
}

async function structuredError(tree: unknown, schema: unknown, answer?: unknown) {
  const { outcome } = await structured(tree, schema, answer)
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`)
  return outcome.error
}

describe("the documented recipe", () => {
  it("turns an Agent answer into a typed value used by a later Agent", async () => {
    const provider = structuredProvider({ severity: "high", summary: "authorization is checked after mutation" }).provider
    async function Review() {
      const finding = await evaluate(<Agent provider={provider}>Inspect the change.</Agent>, Finding)
      return <Agent provider={provider}>Explain this {finding.severity} finding: {finding.summary}</Agent>
    }
    await expect(new AmlRuntime().evaluate(<Review />)).resolves.toBe(
      "text:Explain this high finding: authorization is checked after mutation",
    )
  })

  it.each([
    ["zod", Finding],
    ["valibot", toStandardJsonSchema(v.object({ severity: v.picklist(["low", "high"]), summary: v.string() }))],
    ["arktype", type({ severity: "'low' | 'high'", summary: "string" })],
  ])("works with %s", async (_, schema) => {
    const { outcome, requests } = await structured(<Agent>Inspect.</Agent>, schema)
    expect(outcome).toEqual({ ok: true, value: { severity: "high", summary: "s" } })
    expect(requests[0].output.type).toBe("json")
    const jsonSchema = requests[0].output.jsonSchema
    expect(jsonSchema).toMatchObject({ properties: { summary: { type: "string" } }, type: "object" })
    expect([...jsonSchema.properties.severity.enum].sort()).toEqual(["high", "low"])
    const bad = await structuredError(<Agent>Inspect.</Agent>, schema, { severity: "medium", summary: "s" })
    expectError(bad, EvaluationError, 'Agent "p" (span-1) returned invalid structured output')
    expectError(bad.cause, TypeError, "Agent structured output failed schema validation")
    expect(bad.cause.cause.length).toBeGreaterThan(0)
  })
})

describe("schema capture (SO-1)", () => {
  it.each([
    ["null", null, "Agent output schema must be an object"],
    ["a string", "Finding", "Agent output schema must be an object"],
    ["no ~standard", {}, "Agent output schema must implement Standard Schema"],
    ["a bad contract", { "~standard": { validate() {}, vendor: "x", version: 0 } }, "Agent output schema has an invalid Standard Schema contract"],
    ["no JSON Schema half", v.object({ a: v.string() }), "Agent output schema must implement Standard JSON Schema"],
    ["a non-object JSON Schema", customSchema(anything["~standard"].validate, () => "object"), "Agent output JSON Schema must be an object"],
  ])("rejects evaluate() for %s", async (_, schema, message) => {
    expectError(await structuredError(<Agent>x</Agent>, schema), TypeError, message)
  })

  it("rejects (never throws) and gives the cause of an invalid JSON Schema", async () => {
    const boom = new Error("cannot convert")
    const throwing = customSchema(anything["~standard"].validate, () => {
      throw boom
    })
    let returned: unknown
    function Probe() {
      returned = evaluate(<Agent>x</Agent>, throwing)
      return (returned as Promise<unknown>).then(() => "resolved", () => "rejected")
    }
    await expect(new AmlRuntime().evaluate(<Probe />)).resolves.toBe("rejected")
    expect(returned).toBeInstanceOf(Promise)
    const rejected = await structuredError(<Agent>x</Agent>, throwing)
    expectError(rejected, TypeError, "Agent output JSON Schema is invalid")
    expect(rejected.cause).toBe(boom)
    const nonJson = await structuredError(<Agent>x</Agent>, customSchema(anything["~standard"].validate, () => ({ d: new Point(0, 0) })))
    expectError(nonJson, TypeError, "Agent output JSON Schema is invalid")
    expectError(nonJson.cause, TypeError, "Agent output schema JSON Schema contains a non-plain object")
    const meta = await structuredError(<Agent>x</Agent>, customSchema(anything["~standard"].validate, () => ({ type: "objekt" })))
    expectError(meta, TypeError, "Agent output JSON Schema is invalid")
    expect(meta.cause.message).toMatch(/\/type/)
  })

  it("sends a frozen draft 2020-12 snapshot as request.output", async () => {
    const { requests } = await structured(<Agent>x</Agent>, Finding)
    const output = requests[0].output
    expect(output).toEqual({ jsonSchema: Finding["~standard"].jsonSchema.input({ target: "draft-2020-12" }), type: "json" })
    expect(Object.isFrozen(output) && Object.isFrozen(output.jsonSchema) && Object.isFrozen(output.jsonSchema.properties)).toBe(true)
  })
})

describe("shape (SO-1)", () => {
  const ONE = "Structured evaluate() must resolve to exactly one <Agent>"
  const TEXT = "Structured evaluate() cannot include text outside its <Agent>"

  it.each([
    ["no Agent", null, ONE],
    ["two Agents", [<Agent>a</Agent>, <Agent>b</Agent>], ONE],
    ["a child Agent in the prompt", <Agent>a<Agent>b</Agent></Agent>, ONE],
    ["a child Agent in System", <Agent>a<System><Agent>b</Agent></System></Agent>, ONE],
    ["a child Agent in a FollowUp", <Agent>a<FollowUp><Agent>b</Agent></FollowUp></Agent>, ONE],
    ["text outside", ["note", <Agent>a</Agent>], TEXT],
    ["whitespace outside", [<Agent>a</Agent>, " "], TEXT],
    ["only text", "just text", TEXT],
  ])("rejects %s", async (_, tree, message) => {
    expectError(await structuredError(tree, Finding), EvaluationError, message)
  })

  it("sees through Fragments, components, arrays, empty values and promises", async () => {
    function Wrap({ children }: { children?: unknown }) {
      return children as never
    }
    const tree = [null, "", false, <><Wrap>{Promise.resolve(<Agent>deep</Agent>)}</Wrap></>]
    const { outcome, requests } = await structured(tree, Finding)
    expect(outcome.ok).toBe(true)
    expect(requests[0].prompt).toBe("deep")
  })

  it("applies the schema to the final turn only: request.output with follow-ups kept", async () => {
    const { requests } = await structured(<Agent>first<FollowUp>second</FollowUp><FollowUp>final</FollowUp></Agent>, Finding)
    expect(requests[0].followUps).toEqual(["second", "final"])
    expect(requests[0].output.type).toBe("json")
  })

  it("does not ask non-structured Agents for output", async () => {
    const { provider, requests } = structuredProvider({})
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>plain</Agent>)
    expect("output" in requests[0]).toBe(false)
  })
})
