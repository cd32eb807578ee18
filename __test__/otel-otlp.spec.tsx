// The exporter through the official OTLP/HTTP exporter (JSON protocol) to a receiver on
// 127.0.0.1: the received payload names the spans, links parents by id within one trace,
// carries aml.* and GenAI attributes and the ERROR status of a failed evaluation.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"

import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { AmlRuntime, createOpenTelemetryTracer } from "@aml-jsx/sdk"

import { tracedWorkflow } from "./otel-workflow.js"
import { installContextManager } from "./support/otel.js"

type Received = { path: string | undefined; contentType: string | undefined; body: any }

let server: Server
let url: string
const received: Received[] = []

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      let body = Buffer.concat(chunks)
      if (request.headers["content-encoding"] === "gzip") body = gunzipSync(body)
      received.push({ body: JSON.parse(body.toString("utf8")), contentType: request.headers["content-type"], path: request.url })
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

type OtlpSpan = {
  name: string
  spanId: string
  parentSpanId?: string
  traceId: string
  kind: number
  status?: { code?: number; message?: string }
  attributes: { key: string; value: Record<string, unknown> }[]
  events?: { name: string }[]
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

describe("OTLP/HTTP export", () => {
  it("delivers the AML span tree as OTLP JSON", async () => {
    installContextManager()
    const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] })
    const tracer = provider.getTracer("aml-otlp-test")
    const { App, runtime } = tracedWorkflow(tracer, createOpenTelemetryTracer({ tracer }))
    await runtime.evaluate(<App />)
    function Fails(): never {
      throw new TypeError("nope")
    }
    const failing = new AmlRuntime({ trace: createOpenTelemetryTracer({ tracer }) })
    await expect(failing.evaluate(<Fails />)).rejects.toThrow("nope")
    await provider.forceFlush()
    await provider.shutdown()

    expect(received.length).toBeGreaterThan(0)
    for (const request of received) {
      expect(request.path).toBe("/v1/traces")
      expect(request.contentType).toBe("application/json")
    }
    const spans: OtlpSpan[] = received.flatMap((request) =>
      request.body.resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)),
    )
    const byName = (name: string) => spans.filter((span) => span.name === name)
    const byId = new Map(spans.map((span) => [span.spanId, span]))
    const parentName = (span: OtlpSpan) => (span.parentSpanId ? byId.get(span.parentSpanId)?.name : undefined)

    const [workflowRoot, failedRoot] = byName("aml.evaluate")
    expect(byName("aml.evaluate")).toHaveLength(2)
    const workflow = spans.filter((span) => span.traceId === workflowRoot!.traceId)
    expect(workflow.map((span) => span.name).sort()).toEqual(
      [
        "aml.evaluate",
        "component App",
        "component Review",
        "execute_tool aml_set_state",
        "execute_tool lookup",
        "invoke_agent App",
        "invoke_agent App",
        "invoke_agent Review",
        "loop Loop",
        "parallel Parallel",
        "sandbox Sandbox",
        "script Script",
        "user.component-http",
        "user.provider-http",
        "user.provider-http",
        "user.provider-http",
        "user.tool-http",
      ].sort(),
    )
    for (const span of workflow) if (span !== workflowRoot) expect(byId.has(span.parentSpanId!)).toBe(true)
    const tool = byName("execute_tool lookup")[0]!
    expect(parentName(tool)).toBe("invoke_agent Review")
    expect(attribute(tool, "gen_ai.operation.name")).toBe("execute_tool")
    expect(attribute(tool, "aml.span.kind")).toBe("tool")
    expect(attribute(tool, "gen_ai.tool.call.arguments")).toBeUndefined()
    const agent = byName("invoke_agent Review")[0]!
    expect(attribute(agent, "gen_ai.request.model")).toBe("model-1")
    expect(agent.events?.map((event) => event.name)).toEqual(["capability.tool"])
    expect(agent.kind).toBe(1) // SPAN_KIND_INTERNAL

    expect(failedRoot!.traceId).not.toBe(workflowRoot!.traceId)
    expect(failedRoot!.status).toEqual({ code: 2, message: "TypeError" })
    const failed = byName("component Fails")[0]!
    expect(parentName(failed)).toBe("aml.evaluate")
    expect(failed.status?.code).toBe(2)
    expect(attribute(failed, "error.type")).toBe("TypeError")
    expect(failed.events?.map((event) => event.name)).toEqual(["exception"])
  })
})
