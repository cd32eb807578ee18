// The OTel context user code runs in (components, provider calls, Tool executors) while the
// exporter's span runner is installed. It is an OpenTelemetry `Context` whose active span is
// created only when something reads it: `trace.getSpan(context.active())`, a tracer starting a
// child span, `trace.setSpan(context.active(), …)`. A provider call that nothing instruments
// then costs no early OTel span; its span is created once, with all its attributes, when the
// AML span ends (otel-tracer.js).
//
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
 * The lazy context class for one exporter. `resolver.resolve(run, state)` returns the real
 * context of AML span `state` (creating its OTel span) or the run's context when the span is
 * unknown.
 */
export function lazyContextClass(api, resolver) {
  const spanKey = spanKeyOf(api.trace)

  return class LazySpanContext {
    constructor(run, state) {
      this.run = run
      this.state = state
      this.resolved = undefined
    }

    /** The context with the AML span's OTel span in it (created on first use). */
    real() {
      if (this.resolved !== undefined) return this.resolved
      const real = resolver.resolve(this.run, this.state)
      // An unknown span resolves to the run's context; ask again next time (it may arrive).
      if (real !== this.run.context) this.resolved = real
      return real
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
