// <Agent> tracing (INVENTORY §2.3): the Agent span, its attributes and identities.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, FollowUp, System } from "@aml-jsx/sdk"

import { type Call, recorder } from "./support/agent.js"
import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

describe("the Agent span", () => {
  function agentEnds(events: any[]) {
    return events.filter((e) => e.type === "span.end" && e.kind === "agent" && e.name === "Agent")
  }

  test("end attributes: provider, tools, mcpServers, turns, model; no content for a metadata listener", async () => {
    const { provider } = recorder("prov", () => ({ text: "answer" }))
    const runtime = new AmlRuntime({ agentProvider: provider, system: "sys" })
    const events = traced(runtime, false)
    await runtime.evaluate(
      <Agent model="m1">
        ask
        <FollowUp>again</FollowUp>
      </Agent>,
    )
    const start = events.find((e) => e.type === "span.start" && e.kind === "agent")
    expect(start).toMatchObject({ name: "Agent", parentSpanId: "trace-0", spanId: "span-1" })
    expect({ ...start.attributes }).toEqual({})
    const [end] = agentEnds(events)
    expect(end).toMatchObject({ parentSpanId: "trace-0", spanId: "span-1", status: "ok" })
    expect({ ...end.attributes }).toEqual({ mcpServers: 0, model: "m1", provider: "prov", tools: 0, turns: 2 })
    expect(Object.getPrototypeOf(end.attributes)).toBe(null)
    expect(Object.isFrozen(end.attributes)).toBe(true)
  })

  test("model is omitted without the prop; prompt, system and output only for captureContent listeners", async () => {
    const { provider } = recorder("prov", () => ({ text: "the answer" }))
    const runtime = new AmlRuntime({ agentProvider: provider, system: "runtime" })
    const plain = traced(runtime, false)
    const content = traced(runtime, true)
    await runtime.evaluate(
      <Agent system="fixed">
        <System>frag</System> question{" "}
      </Agent>,
    )
    expect({ ...agentEnds(plain)[0].attributes }).toEqual({ mcpServers: 0, provider: "prov", tools: 0, turns: 1 })
    expect({ ...agentEnds(content)[0].attributes }).toEqual({
      mcpServers: 0,
      output: "the answer",
      prompt: "question",
      provider: "prov",
      system: "runtime\nfixed\nfrag",
      tools: 0,
      turns: 1,
    })
  })

  test("a failing provider closes the Agent span with status error", async () => {
    const provider = {
      name: "p",
      async run() {
        throw new TypeError("nope")
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, true)
    await rejection(runtime.evaluate(<Agent>x</Agent>))
    const end = events.find((e) => e.type === "span.end" && e.spanId === "span-1")
    expect(end.status).toBe("error")
    expect(end.attributes["error.type"]).toBe("EvaluationError")
    expect(end.attributes["error.message"]).toBe('Agent "p" (span-1) failed')
  })

  test("nested Agent spans are parented to the enclosing Agent span", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    await runtime.evaluate(
      <Agent>
        <Agent>inner</Agent>
      </Agent>,
    )
    const starts = events.filter((e) => e.type === "span.start" && e.kind === "agent")
    expect(starts.map((e) => [e.spanId, e.parentSpanId])).toEqual([
      ["span-1", "trace-0"],
      ["span-2", "span-1"],
    ])
    const ends = agentEnds(events)
    expect(ends.map((e) => e.spanId)).toEqual(["span-2", "span-1"])
  })

  test("span ids do not depend on whether tracing is enabled", async () => {
    const untraced = recorder()
    const tracedRec = recorder()
    function C() {
      return <Agent>c</Agent>
    }
    const tree = (
      <Agent>
        <C />
        <Agent>d</Agent>
      </Agent>
    )
    await new AmlRuntime({ agentProvider: untraced.provider }).evaluate(tree)
    const runtime = new AmlRuntime({ agentProvider: tracedRec.provider })
    traced(runtime, false)
    await runtime.evaluate(tree)
    const ids = (calls: Call[]) => calls.map((c) => [c.request.trace.spanId, c.request.trace.parentSpanId])
    expect(ids(untraced.calls)).toEqual([
      ["span-2", "trace-1"],
      ["span-3", "span-1"],
      ["span-1", "trace-0"],
    ])
    expect(ids(tracedRec.calls)).toEqual(ids(untraced.calls))
  })
})
