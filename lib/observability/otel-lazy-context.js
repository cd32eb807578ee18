// The OTel context user code runs in (components, provider calls, Tool executors) while the
// exporter's span runner is installed. It is an OpenTelemetry `Context` whose active span is
// created only when something reads it: `trace.getSpan(context.active())`, a tracer starting a
// child span, `trace.setSpan(context.active(), …)`. A provider call that nothing instruments
// then costs no early OTel span; its span is created once, with all its attributes, when the
// AML span ends (otel-tracer.js).
//
// The lazy context is the exporter's own state of the AML span (one object per span, no
// extra allocation per span run): `context` is the real context once the OTel span exists.
// Every other key reads through to the evaluation's own context (the one active where
// evaluate() was called): AML's span contexts only ever add the span key to it.

/** The API's span context key, found by asking `trace.getSpan` which key it reads. */
function spanKeyOf(trace) {
  let key
  trace.getSpan({
    getValue(candidate) {
      key = candidate
      return undefined
    },
  })
  return key
}

/**
 * The span state class for one exporter: an AML span as the exporter knows it, and its lazy
 * OTel context. `resolve(state)` returns the real context of `state` (creating its OTel span)
 * or the run's context while the span's start record has not arrived.
 */
export function spanStateClass(api, resolve) {
  const spanKey = spanKeyOf(api.trace)

  return class SpanState {
    constructor(run) {
      /** The evaluation (otel-tracer.js RunState). */
      this.run = run
      /** False for a placeholder made when user code runs before the start record arrives. */
      this.seen = false
      this.id = undefined
      this.parentId = undefined
      this.parent = undefined
      this.kind = undefined
      this.name = undefined
      this.attributes = undefined
      this.agentName = undefined
      /** Start time, epoch milliseconds. */
      this.start = 0
      /** The OTel span, once created; `context` is the OTel context with it active. */
      this.span = undefined
      this.context = undefined
      /** Point events (`[name, attributes, time]`) that arrived before the OTel span existed. */
      this.events = undefined
    }

    /** The context with the AML span's OTel span in it (created on first use). */
    real() {
      return this.context ?? resolve(this)
    }

    getValue(key) {
      return key === spanKey ? this.real().getValue(key) : this.run.context.getValue(key)
    }

    setValue(key, value) {
      return this.real().setValue(key, value)
    }

    deleteValue(key) {
      return this.real().deleteValue(key)
    }
  }
}
