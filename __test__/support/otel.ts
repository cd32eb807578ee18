// OpenTelemetry test setup for the exporter specs: an AsyncLocalStorage context manager (set
// once per forked test file) and a BasicTracerProvider writing to an InMemorySpanExporter.
import { context } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base"

let installed = false

/** Installs the async context manager (idempotent within one test process). */
export function installContextManager() {
  if (installed) return
  installed = true
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
}

/** A fresh provider + in-memory exporter; `tracer` is what the tests hand to the exporter. */
export function memoryTracing() {
  installContextManager()
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer("aml-test")
  return { exporter, provider, tracer }
}

/** Finished spans with helpers to walk the tree by name. */
export function spanTree(spans: readonly ReadableSpan[]) {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
  const named = (name: string) => {
    const found = spans.filter((span) => span.name === name)
    if (found.length === 0) throw new Error(`no span named ${name}; have ${spans.map((s) => s.name).join(", ")}`)
    return found
  }
  const one = (name: string) => {
    const found = named(name)
    if (found.length !== 1) throw new Error(`${found.length} spans named ${name}`)
    return found[0]!
  }
  const parentOf = (span: ReadableSpan) => {
    const id = span.parentSpanContext?.spanId
    return id === undefined ? undefined : byId.get(id)
  }
  const parentName = (span: ReadableSpan) => parentOf(span)?.name
  return { named, one, parentOf, parentName }
}
