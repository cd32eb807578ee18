// The runtime-owned `aml_set_state` Tool of <Loop> (INVENTORY LP-1, SPEC §12): the wrapper in
// request.tools, return values, serialised calls, errors, expiry, the duplicate/allowlist
// rules; committed transitions, maxStateTransitions (RT-1) and the trace (§2.3, §2.4).
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, Loop, Tool, defineTool } from "@aml-jsx/sdk"

import { delay, traceRecorder } from "./support/async.js"
import { Counter, countTo, scripted, stateToolDescription } from "./support/loop.js"
import { customSchema, expectError, failureOf } from "./support/schemas.js"

const counter = (props: Record<string, unknown> = {}) => (
  <Loop initial={{ count: 0 }} name="counter" render={({ state }) => <Agent>count={state.count}</Agent>} schema={Counter} {...props} />
)

describe("the aml_set_state wrapper", () => {
  it("is the selected Agent's first Tool, with the documented schema and description", async () => {
    const { provider, requests } = scripted(() => "ok")
    const lookup = defineTool({ description: "Look up", execute: () => ({}), input: z.object({}), name: "lookup" })
    const render = () => <Agent><Tool use={lookup} />go</Agent>
    const runtime = new AmlRuntime({ agentProvider: provider })
    await runtime.evaluate(<Loop initial={{ b: 1, a: "x" }} name="two" render={render} schema={customSchema((value) => ({ value }))} />)
    const [tool, authored] = requests[0].tools
    expect(authored.name).toBe("lookup")
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.keys(tool).sort()).toEqual(["description", "execute", "inputSchema", "kind", "name"])
    expect(tool).toMatchObject({ description: stateToolDescription("two", "a, b"), kind: "javascript", name: "aml_set_state" })
    expect(tool.inputSchema).toEqual({
      additionalProperties: false,
      properties: { updates: { minProperties: 1, type: "object" } },
      required: ["updates"],
      type: "object",
    })
    await runtime.evaluate(<Loop initial={{}} render={() => <Agent>go</Agent>} schema={customSchema((value) => ({ value }))} />)
    expect(requests[1].tools[0].description).toBe(stateToolDescription("Loop", "(none)"))
  })

  it("bypasses allowedTools but collides with an authored Tool of the same name", async () => {
    const { provider, requests } = scripted(() => "ok")
    await new AmlRuntime({ agentProvider: provider, allowedTools: [] }).evaluate(counter())
    expect(requests[0].tools.map((t: any) => t.name)).toEqual(["aml_set_state"])
    const impostor = defineTool({ description: "No", execute: () => ({}), input: z.object({}), name: "aml_set_state" })
    const error = await failureOf(() =>
      new AmlRuntime({ agentProvider: provider }).evaluate(counter({ render: () => <Agent><Tool use={impostor} />x</Agent> })),
    )
    expectError(error, EvaluationError, 'Agent declares duplicate Tool "aml_set_state"')
  })

  it("reports changed, updated and willRepeat; an invalid patch stages nothing", async () => {
    const results: any[] = []
    const { provider } = scripted(async ({ set }) => {
      results.push(await set({ count: 1 }), await set({ count: 1 }))
      results.push(await set({ count: -1 }).catch((error: Error) => error))
      results.push(await set({ count: 0 }))
      return "stable"
    })
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(counter())).resolves.toBe("stable")
    expect(results[0]).toEqual({ changed: true, updated: ["count"], willRepeat: true })
    expect(Object.isFrozen(results[0]) && Object.isFrozen(results[0].updated)).toBe(true)
    expect(results[1]).toEqual({ changed: false, updated: ["count"], willRepeat: true })
    expect(results[2]).toBeInstanceOf(EvaluationError)
    expect(results[2].message).toMatch(/^<Loop name="counter"> state failed schema validation: ./)
    expect(results[3]).toEqual({ changed: true, updated: ["count"], willRepeat: false })
  })

  it("serialises concurrent calls in invocation order, each merged into the last staged state", async () => {
    const validated: string[] = []
    const slow = customSchema(async (value: any) => {
      validated.push(JSON.stringify(value))
      await delay(value.a === 1 && value.b === 0 ? 30 : 1)
      return { value }
    })
    const outcomes: any[] = []
    const { provider } = scripted(async ({ request, set }) => {
      if (request.prompt === "a=0 b=0") outcomes.push(...(await Promise.all([set({ a: 1 }), set({ b: 2 })])))
      return request.prompt
    })
    const render = ({ state }: any) => <Agent>a={state.a} b={state.b}</Agent>
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Loop initial={{ a: 0, b: 0 }} render={render} schema={slow} />)
    expect(text).toBe("a=1 b=2")
    expect(validated.slice(2, 6)).toEqual(['{"a":1,"b":0}', '{"a":1,"b":0}', '{"a":1,"b":2}', '{"a":1,"b":2}'])
    expect(outcomes).toEqual([
      { changed: true, updated: ["a"], willRepeat: true },
      { changed: true, updated: ["b"], willRepeat: true },
    ])
  })

  it("rejects malformed input with the documented EvaluationErrors", async () => {
    const errors: any[] = []
    const { provider } = scripted(async ({ tool, context }) => {
      const inputs: unknown[] = [undefined, { updates: { count: 1n } }, "x", { extra: 1, updates: { count: 1 } }, {}, { updates: {} }]
      inputs.push({ updates: [1] }, { updates: { zeta: 1, alpha: 2, count: 1 } })
      for (const input of inputs) errors.push(await tool.execute(input, context).catch((error: Error) => error))
      return "done"
    })
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(counter())).resolves.toBe("done")
    const prefix = '"counter" Loop state'
    expect(errors.map((e) => [e.constructor, e.message])).toEqual([
      [EvaluationError, `${prefix} Tool input must be stable JSON`],
      [EvaluationError, `${prefix} Tool input must be stable JSON`],
      [EvaluationError, `${prefix} Tool input must contain only updates`],
      [EvaluationError, `${prefix} Tool input must contain only updates`],
      [EvaluationError, `${prefix} updates must be a non-empty JSON object`],
      [EvaluationError, `${prefix} updates must be a non-empty JSON object`],
      [EvaluationError, `${prefix} updates must be a non-empty JSON object`],
      [EvaluationError, `${prefix} cannot update unknown keys: alpha, zeta`],
    ])
    expect(errors[0].cause).toBeInstanceOf(TypeError)
  })

  it("expires when its Agent finishes, also for calls still queued or validating", async () => {
    const EXPIRED = '"counter" state capability expired when its Agent finished'
    let kept: any
    let queued: Promise<unknown> | undefined
    const slow = z.object({ count: z.number() }).refine(async () => (await delay(20), true))
    const { provider } = scripted(({ tool, set }) => {
      kept = tool
      queued = set({ count: 5 })
      queued.catch(() => {})
      return "first"
    })
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(counter({ schema: slow }))).resolves.toBe("first")
    expectError(await failureOf(() => queued), EvaluationError, EXPIRED)
    expectError(await failureOf(() => kept.execute({ updates: { count: 1 } })), EvaluationError, EXPIRED)
  })
})

describe("transitions, maxStateTransitions and trace (RT-1, §2.3, §2.4)", () => {
  it("emits loop.transition on the Loop span with the evaluation-wide count", async () => {
    const { events, sink } = traceRecorder()
    const { provider } = scripted(countTo(2))
    const a = counter({ name: "a" })
    const b = <Loop initial={{ count: 1 }} name="b" render={({ state }) => <Agent>count={state.count}</Agent>} schema={Counter} />
    await expect(new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate([a, b])).resolves.toBe("n=2n=2")
    const loops = events.filter((e) => e.type === "span.start" && e.kind === "loop")
    expect(loops.map((e) => [e.name, e.parentSpanId])).toEqual([["Loop", "trace-0"], ["Loop", "trace-0"]])
    expect(loops.every((e) => /^span-\d+$/.test(e.spanId) && Object.keys(e.attributes).length === 0)).toBe(true)
    const transitions = events.filter((e) => e.type === "event" && e.name === "loop.transition")
    expect(transitions.map((e) => [e.spanId, e.parentSpanId, { ...e.attributes }])).toEqual([
      [loops[0].spanId, "trace-0", { iteration: 1, name: "a", transition: 1 }],
      [loops[0].spanId, "trace-0", { iteration: 2, name: "a", transition: 2 }],
      [loops[1].spanId, "trace-0", { iteration: 1, name: "b", transition: 3 }],
    ])
    const agents = events.filter((e) => e.type === "span.start" && e.kind === "agent" && e.name === "Agent")
    expect(agents.map((e) => e.parentSpanId)).toEqual([...Array(3).fill(loops[0].spanId), ...Array(2).fill(loops[1].spanId)])
    const grants = events.filter((e) => e.name === "capability.tool")
    expect(grants.every((e) => e.attributes.name === "aml_set_state" && e.attributes.kind === "javascript")).toBe(true)
    const tools = events.filter((e) => e.type === "span.end" && e.kind === "tool")
    expect(tools.map((e) => [e.name, e.status, e.attributes.output])).toContainEqual([
      "aml_set_state",
      "ok",
      '{"changed":true,"updated":["count"],"willRepeat":true}',
    ])
    const ends = events.filter((e) => e.type === "span.end" && e.kind === "loop")
    expect(ends.map((e) => e.status)).toEqual(["ok", "ok"])
  })

  it("fails the commit that exceeds maxStateTransitions, counted across Loops", async () => {
    const { events, sink } = traceRecorder()
    const { provider } = scripted(countTo(9))
    const error = await failureOf(() =>
      new AmlRuntime({ agentProvider: provider, maxStateTransitions: 3, trace: sink }).evaluate([counter({ initial: { count: 7 }, name: "a" }), counter({ name: "b" })]),
    )
    expectError(error, EvaluationError, 'AML evaluation exceeded maxStateTransitions 3 at Loop "b" iteration 2')
    const ends = events.filter((e) => e.type === "span.end" && e.kind === "loop")
    expect(ends.map((e) => [e.status, e.attributes["error.type"]])).toEqual([["ok", undefined], ["error", "EvaluationError"]])
  })

  it("defaults to 16 transitions; 0 means unlimited", async () => {
    const { provider } = scripted(countTo(20))
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(counter()))
    expectError(error, EvaluationError, 'AML evaluation exceeded maxStateTransitions 16 at Loop "counter" iteration 17')
    await expect(new AmlRuntime({ agentProvider: provider, maxStateTransitions: 0 }).evaluate(counter())).resolves.toBe("n=20")
  })

  it("stops at an abort: the rejecting Agent's wrapper carries the caller's reason", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    const { provider } = scripted(async (turn) => {
      if (turn.request.prompt === "count=2") controller.abort(reason)
      return countTo(5)(turn)
    })
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(counter(), { signal: controller.signal }))
    expect(error.message).toMatch(/^Agent "scripted" \(span-\d+\) failed$/)
    expect(error.cause).toBe(reason)
  })
})
