// <Loop> render selection precedes execution (issue 8 §2.5, INVENTORY LP-1): a render value
// that does not resolve to exactly one <Agent> rejects before any provider is called, even
// when the problem comes after a valid Agent; the selected Agent still runs with its
// component's Context and under its component's span.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Loop, Sandbox, createContext, useContext } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { traceRecorder } from "./support/async.js"
import { expectExact, rejection } from "./support/errors.js"
import { Counter, scripted } from "./support/loop.js"

const NOT_ONE = "<Loop> render must resolve to exactly one <Agent>"

/** Evaluates a Loop whose render returns `value`; returns the rejection and the provider calls. */
async function selectionFailure(render: () => unknown) {
  const { provider, requests } = scripted(() => "ran")
  const sandboxProvider = new DeterministicSandboxProvider()
  const runtime = new AmlRuntime({ agentProvider: provider, sandboxProvider })
  const error = await rejection(runtime.evaluate(<Loop initial={{ count: 0 }} render={render} schema={Counter} />))
  return { acquisitions: sandboxProvider.acquisitions.length, error, requests }
}

describe("selection precedes execution (§2.5)", () => {
  const Late = () => "late text"
  const Wrap = () => <Agent>wrapped</Agent>
  const cases: [string, () => unknown][] = [
    ["text", () => "just text"],
    ["text after the Agent", () => [<Agent>a</Agent>, "trailing"]],
    ["two Agents", () => [<Agent>a</Agent>, <Agent>b</Agent>]],
    ["a second Agent from a later component", () => [<Wrap />, <Wrap />]],
    ["<Sandbox><Agent/></Sandbox>", () => <Sandbox><Agent>a</Agent></Sandbox>],
    ["a later component's text", () => [<Wrap />, <Late />]],
    ["a Sandbox after the Agent", () => [<Agent>a</Agent>, <Sandbox>x</Sandbox>]],
    ["a child Agent, then trailing text", () => [<Agent><Agent>child</Agent>parent</Agent>, "x"]],
  ]
  for (const [label, render] of cases) {
    it(`${label}: rejects before any provider is called`, async () => {
      const { acquisitions, error, requests } = await selectionFailure(render)
      expectExact(error, EvaluationError, NOT_ONE)
      expect(requests).toHaveLength(0)
      expect(acquisitions).toBe(0)
    })
  }

  it("later siblings are evaluated before the selected Agent runs", async () => {
    const log: string[] = []
    const After = () => (log.push("after component"), null)
    const { provider } = scripted(({ request }) => (log.push(`provider: ${request.prompt}`), "done"))
    const render = () => [null, <Agent>go</Agent>, <After />, false]
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Loop initial={{ count: 0 }} render={render} schema={Counter} />)
    expect(text).toBe("done")
    expect(log).toEqual(["after component", "provider: go"])
  })

  it("the selected Agent keeps its Context and the state Tool, and its component owns its span", async () => {
    const Mode = createContext<string>("Mode")
    const Prompt = () => <Agent>{useContext(Mode)}</Agent>
    const Quiet = () => null
    const { provider, requests } = scripted(() => "final")
    const { events, sink } = traceRecorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    runtime.on("trace", sink)
    const render = () => [<Mode.Provider value="strict"><Prompt /></Mode.Provider>, <Quiet />]
    const text = await runtime.evaluate(<Loop initial={{ count: 0 }} render={render} schema={Counter} />)
    expect(text).toBe("final")
    expect(requests[0].prompt).toBe("strict")
    expect(requests[0].tools.map((tool: any) => tool.name)).toEqual(["aml_set_state"])
    const spans = events.filter((event) => event.type === "span.start" || event.type === "span.end")
    const line = (event: any) => `${event.type === "span.start" ? "start" : "end"} ${event.kind} ${event.name}`
    expect(spans.filter((event) => event.kind !== "tool").map(line)).toEqual([
      "start evaluation evaluate",
      "start loop Loop",
      "start component Prompt",
      "start component Quiet",
      "end component Quiet",
      "start agent Agent",
      "end agent Agent",
      "end component Prompt",
      "end loop Loop",
      "end evaluation evaluate",
    ])
    const prompt = spans.find((event) => event.name === "Prompt")
    const agent = spans.find((event) => event.kind === "agent")
    expect(agent.parentSpanId).toBe(prompt.spanId)
  })
})
