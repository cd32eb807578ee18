// Exporting an AML evaluation to OpenTelemetry: the exporter turns AML's trace stream into
// OTel spans under the caller's active span; a span the component starts itself nests under
// that component. Uses the in-memory exporter so it needs no collector.
//
//   npx tsx examples/otel.tsx

import { context, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { z } from "zod"

import { Agent, AmlRuntime, Tool, createOpenTelemetryTracer, defineTool } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
const tracer = trace.getTracer("example-app")

const forecast = defineTool({
  description: "Weather forecast for a city",
  execute: ({ city }: { city: string }) => ({ city, sky: "clear" }),
  input: z.object({ city: z.string() }),
  name: "forecast",
})

const agentProvider = new DeterministicAgentProvider({
  name: "deterministic",
  respond: async (request, executionContext) => {
    const tool = request.tools[0]
    const result = tool === undefined ? undefined : await tool.execute({ city: "Oslo" }, executionContext)
    return { text: `forecast: ${JSON.stringify(result)}` }
  },
})

function Planner() {
  // A span of the application's own (an HTTP client's, say) nests under "component Planner".
  tracer.startSpan("fetch calendar").end()
  return (
    <Agent model="demo-model">
      <Tool use={forecast} />
      Plan a picnic
    </Agent>
  )
}

const runtime = new AmlRuntime({ agentProvider, trace: createOpenTelemetryTracer() })
const text = await tracer.startActiveSpan("handle request", async (span) => {
  try {
    return await runtime.evaluate(<Planner />)
  } finally {
    span.end()
  }
})
console.log(text)

const spans = exporter.getFinishedSpans()
const start = (span: ReadableSpan) => span.startTime[0] * 1e9 + span.startTime[1]
const children = (parentId: string | undefined) =>
  spans.filter((span) => span.parentSpanContext?.spanId === parentId).sort((a, b) => start(a) - start(b))
// Spans finish innermost first; print them as a tree, siblings in start order.
function print(span: ReadableSpan, depth: number) {
  const genAi = span.attributes["gen_ai.operation.name"]
  console.log(`${"  ".repeat(depth)}${span.name}${genAi === undefined ? "" : ` [${String(genAi)}]`}`)
  for (const child of children(span.spanContext().spanId)) print(child, depth + 1)
}
for (const root of children(undefined)) print(root, 0)
