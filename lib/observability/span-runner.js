// The span-runner protocol: a trace listener may carry a function under SPAN_RUNNER that the
// runtime uses to run user code "inside" an AML span — a component invocation, a provider
// call, a Tool executor — so that an instrumentation library's own context (OpenTelemetry's
// active span) follows AML's span tree. createOpenTelemetryTracer() is the one user.
//
// `runner(runId, spanId, fn)` must call `fn()` synchronously exactly once and return (or
// throw) what it does. The key is a realm-wide symbol so an exporter from one physical SDK
// copy works with another copy's runtime. Without a runner the hot path pays one property
// check per component.

export const SPAN_RUNNER = Symbol.for("@aml-jsx/sdk/trace-span-runner")

/** The first runner among the registries' trace listeners (several exporters share one context API). */
export function findSpanRunner(registries) {
  for (const registry of registries) {
    for (const entry of registry.trace) if (entry.spanRunner !== undefined) return entry.spanRunner
  }
  return undefined
}

/** Runs `fn()` inside AML span `spanId` when a runner is installed, else plainly. */
export function inSpan(domain, spanId, fn) {
  const runner = domain.spanRunner
  return runner === undefined ? fn() : runner(domain.runId, spanId, fn)
}
