// The system span (INVENTORY AG-2, §2.3): kind, name, parent, index and content of <System> spans.
import { describe, expect, test } from "vitest"

import { Agent, System } from "@aml-jsx/sdk"

import { recorder, runtimeWith } from "./support/descriptors.js"
import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

describe("the system span", () => {
  test("kind system, name System, trace-N under the Agent span, index among System fragments", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider, { system: "runtime" })
    const plain = traced(runtime, false)
    const content = traced(runtime, true)
    await runtime.evaluate(
      <Agent system="fixed">
        <System> first </System>
        prompt
        <System>second</System>
      </Agent>,
    )
    const starts = plain.filter((e) => e.type === "span.start" && e.kind === "system")
    expect(starts.map((e) => [e.spanId, e.parentSpanId, e.name, { ...e.attributes }])).toEqual([
      ["trace-1", "span-1", "System", { index: 1 }],
      ["trace-2", "span-1", "System", { index: 2 }],
    ])
    const ends = plain.filter((e) => e.type === "span.end" && e.kind === "system")
    expect(ends.map((e) => [e.spanId, e.status, { ...e.attributes }])).toEqual([
      ["trace-1", "ok", {}],
      ["trace-2", "ok", {}],
    ])
    const contentEnds = content.filter((e) => e.type === "span.end" && e.kind === "system")
    expect(contentEnds.map((e) => ({ ...e.attributes }))).toEqual([{ content: "first" }, { content: "second" }])
    // The System span closes before the Agent span, which closes last among them.
    const order = plain
      .filter((e) => e.type === "span.end")
      .map((e) => e.spanId)
      .filter((id) => id !== "trace-0")
    expect(order).toEqual(["trace-1", "trace-2", "span-1"])
  })

  test("the index counts per Agent, and a System inside a component is parented to that component", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider)
    const events = traced(runtime, false)
    function Policy() {
      return <System>p</System>
    }
    await runtime.evaluate(
      <Agent>
        <System>a</System>
        <Agent>
          <System>child</System>x
        </Agent>
        <Policy />
      </Agent>,
    )
    const starts = events.filter((e) => e.type === "span.start" && e.kind === "system")
    expect(starts.map((e) => [e.parentSpanId, e.attributes.index])).toEqual([
      ["span-1", 1],
      ["span-2", 1],
      ["trace-3", 2],
    ])
  })

  test("an empty System closes its span with status error", async () => {
    const { provider } = recorder()
    const runtime = runtimeWith(provider)
    const events = traced(runtime, true)
    await rejection(runtime.evaluate(<Agent>{<System> </System>}</Agent>))
    const end = events.find((e) => e.type === "span.end" && e.kind === "system")
    expect(end.status).toBe("error")
    expect(end.attributes["error.message"]).toBe("<System> must resolve to non-empty text")
    const agentEnd = events.find((e) => e.type === "span.end" && e.kind === "agent")
    expect(agentEnd.status).toBe("error")
  })
})
