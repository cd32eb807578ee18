// createOpenTelemetryTracer (docs/OBSERVABILITY.md): the span tree of a workflow using every
// primitive of this build, parents, times, attributes (aml.* and GenAI), point events,
// statuses and exception events, content consent, and context propagation both ways.
import { context, SpanStatusCode, trace } from "@opentelemetry/api"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it } from "vitest"

import { AbstractAgentProvider, Agent, AmlRuntime, createOpenTelemetryTracer, type AgentProviderSession } from "@aml-jsx/sdk"

import { tracedWorkflow } from "./otel-workflow.js"
import { memoryTracing, spanTree } from "./support/otel.js"

const ms = (time: readonly [number, number]) => time[0] * 1000 + time[1] / 1e6

async function runWorkflow(captureContent: boolean) {
  const { exporter, tracer } = memoryTracing()
  const amlEvents: any[] = []
  const exporterSink = createOpenTelemetryTracer({ captureContent, tracer })
  const { App, runtime } = tracedWorkflow(tracer, exporterSink)
  runtime.on("trace", (event) => void amlEvents.push(event))
  const text = await runtime.evaluate(<App />)
  return { amlEvents, spans: exporter.getFinishedSpans(), text }
}

describe("the span tree of a full workflow", () => {
  it("exports one OTel span per AML span, with AML's parents and aml.* identity", async () => {
    const { amlEvents, spans, text } = await runWorkflow(false)
    expect(text).toBe("verdict=finehi\nre:count=1")
    const starts = amlEvents.filter((event) => event.type === "span.start")
    const amlSpans = spans.filter((span) => span.attributes["aml.span.id"] !== undefined)
    expect(amlSpans).toHaveLength(starts.length)
    const bySpanId = new Map(amlSpans.map((span) => [span.attributes["aml.span.id"], span]))
    const { parentOf } = spanTree(spans)
    for (const start of starts) {
      const span = bySpanId.get(start.spanId)!
      expect(span.attributes).toMatchObject({ "aml.run.id": start.runId, "aml.span.kind": start.kind, "aml.span.name": start.name })
      expect(parentOf(span)?.attributes["aml.span.id"]).toBe(start.parentSpanId)
      if (start.parentSpanId !== undefined) expect(span.attributes["aml.parent.span.id"]).toBe(start.parentSpanId)
      expect(span.spanContext().traceId).toBe(spans[0]!.spanContext().traceId)
      expect(span.status.code).toBe(SpanStatusCode.UNSET)
      const end = amlEvents.find((event) => event.type === "span.end" && event.spanId === start.spanId)
      // Start: the dispatch time in sub-ms precision, never before the event's Date.now()
      // millisecond (no upper bound: a loaded machine may dispatch late); end: start + durationMs.
      expect(ms(span.startTime)).toBeGreaterThanOrEqual(start.timestamp - 1)
      expect(ms(span.endTime) - ms(span.startTime)).toBeCloseTo(end.durationMs, 2)
    }
    const kinds = new Set(starts.map((start) => start.kind))
    expect([...kinds].sort()).toEqual(["agent", "component", "evaluation", "loop", "parallel", "sandbox", "script", "tool"])
  })

  it("names spans by kind and nests them as authored", async () => {
    const { spans } = await runWorkflow(false)
    const { named, one, parentName } = spanTree(spans)
    expect(parentName(one("aml.evaluate"))).toBeUndefined()
    expect(parentName(one("component App"))).toBe("aml.evaluate")
    expect(parentName(one("parallel Parallel"))).toBe("component App")
    for (const name of ["component Review", "sandbox Sandbox", "loop Loop"]) expect(parentName(one(name))).toBe("parallel Parallel")
    expect(parentName(one("invoke_agent Review"))).toBe("component Review")
    expect(parentName(one("execute_tool lookup"))).toBe("invoke_agent Review")
    expect(parentName(one("script Script"))).toBe("sandbox Sandbox")
    expect(named("invoke_agent App").map(parentName)).toEqual(["loop Loop", "loop Loop"])
    expect(parentName(one("execute_tool aml_set_state"))).toBe("invoke_agent App")
    const parent = one("parallel Parallel")
    for (const child of [one("component Review"), one("loop Loop")]) {
      expect(ms(child.startTime)).toBeGreaterThanOrEqual(ms(parent.startTime))
      expect(ms(child.endTime)).toBeLessThanOrEqual(ms(parent.endTime) + 1)
    }
  })

  it("carries AML attributes, GenAI attributes and point events", async () => {
    const { spans } = await runWorkflow(false)
    const { one, named } = spanTree(spans)
    const agent = one("invoke_agent Review")
    expect(agent.attributes).toMatchObject({
      "aml.model": "model-1",
      "aml.provider": "otel-test",
      "aml.tools": 1,
      "aml.turns": 1,
      "gen_ai.agent.name": "Review",
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "otel-test",
      "gen_ai.request.model": "model-1",
    })
    expect(agent.events.map((event) => [event.name, event.attributes])).toEqual([
      ["capability.tool", { "aml.kind": "javascript", "aml.name": "lookup" }],
    ])
    expect(one("execute_tool lookup").attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup",
      "gen_ai.tool.type": "function",
    })
    expect(one("script Script").attributes).toMatchObject({ "aml.command": "echo", "aml.exitCode": 0, "aml.stdoutLength": 3 })
    expect(one("sandbox Sandbox").attributes["aml.nested"]).toBe(false)
    expect(one("parallel Parallel").attributes["aml.branches"]).toBe(3)
    expect(one("loop Loop").events.map((event) => [event.name, event.attributes])).toEqual([
      ["loop.transition", { "aml.iteration": 1, "aml.name": "counter", "aml.transition": 1 }],
    ])
    expect(named("invoke_agent App")[0]!.attributes["gen_ai.request.model"]).toBeUndefined()
  })
})

describe("content consent", () => {
  const CONTENT_KEYS = [
    "aml.prompt",
    "aml.output",
    "aml.input",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
  ]
  const contentOf = (spans: readonly ReadableSpan[]) =>
    spans.flatMap((span) => Object.keys(span.attributes).filter((key) => CONTENT_KEYS.includes(key)))

  it("exports no content by default", async () => {
    const { spans } = await runWorkflow(false)
    expect(contentOf(spans)).toEqual([])
  })

  it("exports prompts, outputs and Tool arguments/results when the listener opted in", async () => {
    const { spans } = await runWorkflow(true)
    const { one } = spanTree(spans)
    expect(one("invoke_agent Review").attributes).toMatchObject({
      "aml.prompt": "Check the weather",
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Check the weather" }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: '{"verdict":"fine"}' }] }]),
    })
    expect(one("execute_tool lookup").attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"q":"weather"}',
      "gen_ai.tool.call.result": '{"hit":"weather"}',
    })
    // No System text was authored, so there are no system instructions to export.
    expect(one("invoke_agent Review").attributes["gen_ai.system_instructions"]).toBeUndefined()
  })
})

describe("failures", () => {
  async function failing(captureContent: boolean) {
    const { exporter, tracer } = memoryTracing()
    function Broken(): never {
      throw new RangeError("secret detail")
    }
    const runtime = new AmlRuntime({ trace: createOpenTelemetryTracer({ captureContent, tracer }) })
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("secret detail")
    return spanTree(exporter.getFinishedSpans())
  }

  it("sets ERROR status, error.type and an exception event; the message only with content", async () => {
    const redacted = await failing(false)
    for (const name of ["component Broken", "aml.evaluate"]) {
      const span = redacted.one(name)
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "RangeError" })
      expect(span.attributes["error.type"]).toBe("RangeError")
      expect(span.attributes["aml.error.message"]).toBeUndefined()
      expect(span.events.map((event) => [event.name, event.attributes])).toEqual([["exception", { "exception.type": "RangeError" }]])
    }
    const captured = (await failing(true)).one("component Broken")
    expect(captured.status).toEqual({ code: SpanStatusCode.ERROR, message: "secret detail" })
    expect(captured.events[0]!.attributes).toEqual({ "exception.message": "secret detail", "exception.type": "RangeError" })
  })
})

describe("agent.session, agent.turn and agent.cleanup spans", () => {
  class OneTurn extends AbstractAgentProvider<"one-turn"> {
    constructor() {
      super("one-turn")
    }
    protected async openSession(): Promise<AgentProviderSession> {
      return { abort: async () => {}, close: async () => {}, runTurn: async (turn) => ({ text: `ok:${turn.prompt}` }) }
    }
  }

  it("nest under the Agent span and carry the provider as gen_ai.provider.name", async () => {
    const { exporter, tracer } = memoryTracing()
    const runtime = new AmlRuntime({ agentProvider: new OneTurn(), trace: createOpenTelemetryTracer({ tracer }) })
    await runtime.evaluate(<Agent model="m">hello</Agent>)
    const { one, parentName } = spanTree(exporter.getFinishedSpans())
    expect(parentName(one("invoke_agent"))).toBe("aml.evaluate")
    expect(parentName(one("agent.session"))).toBe("invoke_agent")
    expect(one("agent.session").attributes).toMatchObject({ "gen_ai.provider.name": "one-turn", "gen_ai.request.model": "m" })
    expect(parentName(one("agent.turn"))).toBe("agent.session")
    expect(one("agent.turn").attributes).toMatchObject({ "aml.index": 1, "aml.kind": "initial" })
    expect(parentName(one("agent.cleanup"))).toBe("agent.session")
  })
})

describe("context propagation", () => {
  it("makes the evaluation a child of the OTel span active when evaluate() was called", async () => {
    const { exporter, tracer } = memoryTracing()
    const runtime = new AmlRuntime({ trace: createOpenTelemetryTracer({ tracer }) })
    const App = () => "x"
    const outer = tracer.startSpan("request")
    await context.with(trace.setSpan(context.active(), outer), () => runtime.evaluate(<App />))
    outer.end()
    const { one, parentName } = spanTree(exporter.getFinishedSpans())
    expect(parentName(one("aml.evaluate"))).toBe("request")
    expect(one("component App").spanContext().traceId).toBe(outer.spanContext().traceId)
    // A later evaluation outside the span is a new trace root.
    await runtime.evaluate(<App />)
    const roots = spanTree(exporter.getFinishedSpans()).named("aml.evaluate")
    expect(roots[1]!.parentSpanContext).toBeUndefined()
    expect(roots[1]!.spanContext().traceId).not.toBe(outer.spanContext().traceId)
  })

  it("runs components, provider calls and Tool executors with their AML span active", async () => {
    const { spans } = await runWorkflow(false)
    const { named, one, parentName } = spanTree(spans)
    // The component's span stays active across its own awaits.
    expect(parentName(one("user.component-http"))).toBe("component Review")
    expect(parentName(one("user.tool-http"))).toBe("execute_tool lookup")
    expect(named("user.provider-http").map(parentName).sort()).toEqual(["invoke_agent App", "invoke_agent App", "invoke_agent Review"])
  })

  it("leaves the caller's context untouched after the evaluation", async () => {
    const { tracer } = memoryTracing()
    const runtime = new AmlRuntime({ trace: createOpenTelemetryTracer({ tracer }) })
    const App = async () => {
      await Promise.resolve()
      return "x"
    }
    await runtime.evaluate(<App />)
    expect(trace.getSpan(context.active())).toBeUndefined()
  })
})
