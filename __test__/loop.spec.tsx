// <Loop> (INVENTORY LP-1, SPEC §12, draft): props and their errors, state validation,
// render selection, the Loop-in-structured rule, iteration flow, Standard Schema libraries
// and the documented example. The aml_set_state Tool, transitions, budgets and trace are in
// loop-state-tool.spec.tsx.
import * as v from "valibot"
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Fragment, Loop, Sandbox, createContext, evaluate, useContext } from "@aml-jsx/sdk"

import { Counter, countTo, scripted } from "./support/loop.js"
import { customSchema, expectError, failureOf } from "./support/schemas.js"

const once = () => <Agent>once</Agent>

/** Evaluates `<Loop {...props} />` and checks the failure's class and exact message (or pattern). */
async function loopFailure(props: any, message: string | RegExp, type: any = EvaluationError) {
  const { provider } = scripted(() => "ok")
  const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(<Loop {...props} />))
  if (typeof message === "string") expectError(error, type, message)
  else expect([error, error.name, error.message]).toEqual([expect.any(type), type.name, expect.stringMatching(message)])
  return error
}

describe("props (LP-1)", () => {
  const base = { initial: { count: 0 }, render: once, schema: Counter }

  it("rejects children, a bad name and a missing render", async () => {
    await loopFailure({ ...base, children: "x" }, "<Loop> accepts render() instead of children")
    for (const name of ["", " x", "x ", 7]) {
      await loopFailure({ ...base, name }, "<Loop> name must be a non-empty normalized string")
    }
    await loopFailure({ ...base, render: undefined }, "<Loop> render must be a function")
    await loopFailure({ ...base, render: "<Agent/>" }, "<Loop> render must be a function")
  })

  it("labels schema TypeErrors with the Loop name", async () => {
    await loopFailure({ ...base, schema: undefined }, '<Loop name="Loop"> schema must be an object', TypeError)
    await loopFailure({ ...base, name: "r", schema: {} }, '<Loop name="r"> schema must implement Standard Schema', TypeError)
    const broken = { "~standard": { validate: () => ({}), vendor: "", version: 1 } }
    await loopFailure({ ...base, schema: broken }, '<Loop name="Loop"> schema has an invalid Standard Schema contract', TypeError)
  })
})

describe("state validation (LP-1, SPEC §12.4)", () => {
  const label = '<Loop name="s"> state'
  const props = (initial: unknown, schema: any = customSchema((value) => ({ value }))) => ({
    initial,
    name: "s",
    render: once,
    schema,
  })

  it("requires a stable JSON object", async () => {
    const error = await loopFailure(props({ at: new Date(0) }), `${label} must contain only stable JSON`)
    expect(error.cause).toBeInstanceOf(TypeError)
    await loopFailure(props({ n: 1n }), `${label} must contain only stable JSON`)
    for (const initial of [[], null, "x", 3]) await loopFailure(props(initial), `${label} must be a JSON object`)
  })

  it("reports a throwing schema and joins issue messages", async () => {
    const boom = new Error("boom")
    const throwing = customSchema(() => {
      throw boom
    })
    expect((await loopFailure(props({}, throwing), `${label} schema validation failed`)).cause).toBe(boom)
    const failing = customSchema(() => ({ issues: [{ message: "a is wrong" }, { message: "b is missing" }] }))
    await loopFailure(props({}, failing), `${label} failed schema validation: a is wrong; b is missing`)
    await loopFailure(props({ count: -1 }, Counter), /^<Loop name="s"> state failed schema validation: ./)
  })

  it("rejects schemas whose output is not stable JSON state", async () => {
    let parses = 0
    const drifting = customSchema((value: any) => ({ value: { ...value, parses: ++parses } }))
    await loopFailure(props({}, drifting), `${label} schema must produce stable JSON state`)
    await loopFailure(props({}, customSchema(() => ({ value: { at: new Date(0) } }))), `${label} schema must produce stable JSON state`)
    await loopFailure(props({}, customSchema(() => ({ value: [1] }))), `${label} schema must produce stable JSON state`)
    const once = customSchema((value: any) => ("seen" in value ? { issues: [{ message: "again" }] } : { value: { seen: 1 } }))
    await loopFailure(props({}, once), `${label} schema must produce stable JSON state`)
  })

  it("normalises the initial input through the schema before the first render", async () => {
    const Schema = z.object({ count: z.union([z.string(), z.number()]).transform(Number), tags: z.array(z.string()).default([]) })
    const seen: any[] = []
    const { provider } = scripted(() => "done")
    const render = ({ state }: any) => (seen.push(state), <Agent>go</Agent>)
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Loop initial={{ count: "3" }} render={render} schema={Schema} />)
    expect(text).toBe("done")
    expect(seen).toEqual([{ count: 3, tags: [] }])
    expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0].tags)).toBe(true)
  })
})

describe("render selection (LP-1)", () => {
  const NOT_ONE = "<Loop> render must resolve to exactly one <Agent>"
  const select = async (render: () => unknown, message: string) =>
    loopFailure({ initial: { count: 0 }, render, schema: Counter }, message)

  it("rejects text, no Agent, several Agents and other primitives", async () => {
    await select(() => ["x", <Agent>a</Agent>], NOT_ONE)
    await select(() => [<Agent>a</Agent>, 1], NOT_ONE)
    await select(() => null, NOT_ONE)
    await select(() => [], NOT_ONE)
    await select(() => [<Agent>a</Agent>, <Agent>b</Agent>], NOT_ONE)
    await select(() => <Sandbox><Agent>a</Agent></Sandbox>, NOT_ONE)
    await select(() => <Loop initial={{}} render={once} schema={customSchema((value) => ({ value }))} />, NOT_ONE)
  })

  it("reports cycles in the render value with Loop messages", async () => {
    const cyclic: unknown[] = []
    cyclic.push(cyclic)
    await select(() => cyclic, "<Loop> render arrays cannot contain cycles")
    const self: any = <SelfRef />
    function SelfRef() {
      return self
    }
    await select(() => self, "<Loop> render nodes cannot contain cycles")
  })

  it("resolves through components, Fragments and Context Providers; child Agents stay ordinary", async () => {
    const Mode = createContext<string>("Mode")
    function Prompt() {
      return (
        <Agent>
          {useContext(Mode)} <Agent>child</Agent>
        </Agent>
      )
    }
    const { provider, requests } = scripted(() => "child-text", () => "final")
    const render = () => (
      <Fragment>
        <Mode.Provider value="strict">
          <Prompt />
        </Mode.Provider>
      </Fragment>
    )
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Mode.Provider value="outer">
        [<Loop initial={{ count: 0 }} render={render} schema={Counter} />]
      </Mode.Provider>,
    )
    expect(text).toBe("[final]")
    expect(requests.map((r) => [r.prompt, r.tools.map((t: any) => t.name)])).toEqual([
      ["child", []],
      ["strict child-text", ["aml_set_state"]],
    ])
  })

  it("gives render the Loop's lexical environment and component-local evaluate()", async () => {
    const Who = createContext<string>("Who")
    const { provider } = scripted(({ request }) => request.prompt)
    const render = async () => <Agent>{useContext(Who)}:{await evaluate("nested")}</Agent>
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Who.Provider value="ctx">
        <Loop initial={{ count: 0 }} render={render} schema={Counter} />
      </Who.Provider>,
    )
    expect(text).toBe("ctx:nested")
  })

  it("rejects a Loop anywhere inside a structured evaluate()", async () => {
    const Out = z.object({ ok: z.boolean() })
    const { provider } = scripted(() => "x")
    const loop = <Loop initial={{ count: 0 }} render={once} schema={Counter} />
    for (const value of [loop, <Agent>{loop}</Agent>]) {
      function Structured() {
        return evaluate(value, Out).then(String)
      }
      const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(<Structured />))
      expectError(error, EvaluationError, "Structured evaluate() must resolve to exactly one <Agent>")
    }
  })
})

describe("iteration flow (SPEC §12.1, §12.2)", () => {
  it("repeats fresh Agents until the staged state is stable and returns the last Agent text", async () => {
    const { provider, requests } = scripted(countTo(3))
    const renders: any[] = []
    const render = (context: any) => {
      renders.push(context)
      return <Agent>count={context.state.count}</Agent>
    }
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <>
        before|<Loop initial={{ count: 0 }} name="counter" render={render} schema={Counter} />|after
      </>,
    )
    // The Agent texts of changed iterations are dropped.
    expect(text).toBe("before|n=3|after")
    expect(renders.map((c) => [c.iteration, c.state.count])).toEqual([[1, 0], [2, 1], [3, 2], [4, 3]])
    expect(renders.every((c) => Object.isFrozen(c) && Object.isFrozen(c.state))).toBe(true)
    expect(requests.map((r) => r.prompt)).toEqual(["count=0", "count=1", "count=2", "count=3"])
  })

  it("keeps state staged across FollowUps and rethrows what render throws", async () => {
    const { provider, requests } = scripted(async ({ request, set }) => (request.prompt === "0" ? (await set({ count: 1 }), "a") : "b"))
    const render = ({ state }: any) => (
      <Agent>
        {state.count}
        <FollowUp>more</FollowUp>
      </Agent>
    )
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate(<Loop initial={{ count: 0 }} render={render} schema={Counter} />)).resolves.toBe("b")
    expect(requests.map((r) => [r.prompt, r.followUps])).toEqual([["0", ["more"]], ["1", ["more"]]])
    const boom = new Error("render failed")
    const failing = () => {
      throw boom
    }
    expect(await failureOf(() => runtime.evaluate(<Loop initial={{ count: 0 }} render={failing} schema={Counter} />))).toBe(boom)
  })

  it("runs the documented research example", async () => {
    const ResearchState = z.object({ pending: z.array(z.string()), findings: z.array(z.string()), done: z.boolean() })
    const { provider, requests } = scripted(
      async ({ set }) => (await set({ done: true, findings: ["authentication uses OAuth"], pending: [] }), "investigated"),
      () => "Final report: authentication uses OAuth",
    )
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Loop
        initial={{ pending: ["authentication"], findings: [], done: false }}
        name="research"
        schema={ResearchState}
        render={({ iteration, state }) => (
          <Agent>
            {state.done
              ? `Produce the final report from: ${JSON.stringify(state.findings)}`
              : `Iteration ${iteration}. Investigate one item from:
           ${JSON.stringify(state.pending)}. Update the research state.`}
          </Agent>
        )}
      />,
    )
    expect(text).toBe("Final report: authentication uses OAuth")
    expect(requests[0].prompt).toMatch(/^Iteration 1\. Investigate one item from:\s+\["authentication"\]\. Update the research state\.$/)
    expect(requests[1].prompt).toBe('Produce the final report from: ["authentication uses OAuth"]')
  })

  it("works with valibot schemas", async () => {
    const State = v.object({ count: v.number(), note: v.optional(v.string(), "none") })
    const { provider } = scripted(async ({ request, set }) => {
      if (request.prompt === "0/none") await set({ count: 1, note: "bumped" })
      return request.prompt
    })
    const render = ({ state }: any) => <Agent>{state.count}/{state.note}</Agent>
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate(<Loop initial={{ count: 0 }} render={render} schema={State} />)).resolves.toBe("1/bumped")
    await loopFailure(
      { initial: { count: "0" }, name: "v", render: once, schema: State },
      /^<Loop name="v"> state failed schema validation: ./,
    )
  })
})
