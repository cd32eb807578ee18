// The Agent span opens before the Agent's prop checks (issue 8 §2.8): an Agent that fails
// them still has its span.start and a span.end with status "error" in the trace.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError } from "@aml-jsx/sdk"

import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

const provider = { name: "p", run: async () => ({ text: "never" }) }

async function failedAgent(node: unknown) {
  const runtime = new AmlRuntime({ agentProvider: provider })
  const events = traced(runtime, true)
  function Parent() {
    return node
  }
  const error = await rejection(runtime.evaluate(<Parent />))
  return { error, events }
}

function expectFailedAgentSpan(events: any[], error: Error) {
  const agent = events.filter((event) => event.kind === "agent")
  expect(agent.map((event) => event.type)).toEqual(["span.start", "span.end"])
  const [start, end] = agent
  expect(start).toMatchObject({ name: "Agent", parentSpanId: "trace-1", spanId: "span-1" })
  expect({ ...start.attributes }).toEqual({})
  expect(end).toMatchObject({ name: "Agent", parentSpanId: "trace-1", spanId: "span-1", status: "error" })
  expect({ ...end.attributes }).toEqual({ "error.message": error.message, "error.type": error.name })
  // Inside the component span, which closes after it.
  const order = events.map((event) => `${event.type} ${event.spanId}`)
  expect(order).toEqual([
    "span.start trace-0",
    "span.start trace-1",
    "span.start span-1",
    "span.end span-1",
    "span.end trace-1",
    "span.end trace-0",
  ])
}

describe("an Agent that fails its prop checks keeps its span", () => {
  for (const [label, props, message] of [
    ["model", { model: 42 }, "<Agent> model must be a string"],
    ["system", { system: false }, "<Agent> system must be a string"],
    ["permissions", { permissions: "all" }, "<Agent> permissions must be an object"],
    ["cwd", { cwd: "sub" }, "<Agent> cwd requires an enclosing <Sandbox>"],
  ] as const) {
    it(`${label}: ${message}`, async () => {
      const { error, events } = await failedAgent(<Agent {...(props as any)}>x</Agent>)
      expect(error).toBeInstanceOf(EvaluationError)
      expect(error.message).toBe(message)
      expectFailedAgentSpan(events, error)
    })
  }

  it("an invalid provider prop (TypeError from provider validation)", async () => {
    const { error, events } = await failedAgent(<Agent provider={{ name: "", run() {} } as any}>x</Agent>)
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe("Agent provider name must be a non-empty string")
    expectFailedAgentSpan(events, error)
  })

  it("untraced runs reject the same way", async () => {
    const error = await rejection(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent model={42 as any}>x</Agent>))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("<Agent> model must be a string")
  })
})
