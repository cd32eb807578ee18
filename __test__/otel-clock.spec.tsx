// The exporter's clock (lib/observability/trace-sink.js traceClockOffset): AML's spans are timed
// on the performance timeline, but the OTel SDK anchors the spans it times itself to
// Date.now(), and the two drift apart in a long-lived process (the wall clock is slewed or
// stepped). AML's spans must stay on the SDK's clock, so user spans sit inside their AML span.
import { afterEach, describe, expect, it, vi } from "vitest"

import { Agent, AmlRuntime, createOpenTelemetryTracer } from "@aml-jsx/sdk"

import { memoryTracing, spanTree } from "./support/otel.js"

const ms = (time: readonly [number, number]) => time[0] * 1000 + time[1] / 1e6
/** A drift far beyond any timing noise: the wall clock 5 s ahead of the performance timeline. */
const DRIFT_MS = 5_000

afterEach(() => {
  vi.restoreAllMocks()
})

async function traced(withListener: boolean) {
  const { exporter, tracer } = memoryTracing()
  const provider = {
    name: "p",
    async run() {
      tracer.startSpan("user.in-provider").end()
      return { text: "ok" }
    },
  }
  async function App() {
    await Promise.resolve()
    tracer.startSpan("user.in-component").end()
    return <Agent>hi</Agent>
  }
  const runtime = new AmlRuntime({ agentProvider: provider, trace: createOpenTelemetryTracer({ tracer }) })
  if (withListener) runtime.on("trace", () => {})
  const realNow = Date.now.bind(Date)
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + DRIFT_MS)
  const before = Date.now()
  await runtime.evaluate(<App />)
  const after = Date.now()
  return { after, before, spans: exporter.getFinishedSpans() }
}

describe("the exporter's clock", () => {
  for (const withListener of [false, true]) {
    it(`follows Date.now() when it drifts from the performance timeline (${withListener ? "event path" : "batched path"})`, async () => {
      const { after, before, spans } = await traced(withListener)
      const { one } = spanTree(spans)
      for (const [user, aml] of [
        ["user.in-component", "component App"],
        ["user.in-provider", "invoke_agent App"],
      ] as const) {
        const inner = one(user)
        const outer = one(aml)
        // Date.now()'s millisecond is the SDK's precision, so one millisecond either way.
        expect(ms(inner.startTime)).toBeGreaterThanOrEqual(ms(outer.startTime) - 1)
        expect(ms(inner.endTime)).toBeLessThanOrEqual(ms(outer.endTime) + 1)
      }
      const root = one("aml.evaluate")
      expect(ms(root.startTime)).toBeGreaterThanOrEqual(before - 1)
      expect(ms(root.endTime)).toBeLessThanOrEqual(after + 1)
    })
  }
})
