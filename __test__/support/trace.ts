// Shared helper for the span specs: a runtime-wide trace listener that records every event.
import type { AmlRuntime } from "@aml-jsx/sdk"

/** Registers a trace listener on `runtime` and returns the array it records events into. */
export function traced(runtime: AmlRuntime, captureContent: boolean) {
  const events: any[] = []
  const sink: any = (event: any) => {
    events.push(event)
  }
  sink.captureContent = captureContent
  runtime.on("trace", sink)
  return events
}
