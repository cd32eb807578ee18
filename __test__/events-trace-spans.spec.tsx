// Trace events (INVENTORY §2.1–2.5): span sequence, names, nesting, frozen events and failed-span
// attributes. Every assertion is on observable behaviour of the public API.
import { afterEach, describe, expect, it, vi } from "vitest"

import { AmlRuntime, Fragment } from "@aml-jsx/sdk"

import { delay } from "./support/async.js"
import { isDeepFrozen, recorder } from "./support/events.js"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("trace events", () => {
  it("sequence starts at 1 on the root span.start and increases monotonically", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    async function A() {
      await delay(1)
      return [<B />, <B />]
    }
    function B() {
      return "b"
    }
    await runtime.evaluate([<A />, <B />])
    expect(events[0]).toMatchObject({ type: "span.start", spanId: "trace-0", sequence: 1 })
    for (let i = 1; i < events.length; i++) {
      expect(events[i].sequence).toBeGreaterThan(events[i - 1].sequence)
    }
    // Every evaluation has its own counter.
    const second = recorder()
    const off = runtime.on("trace", second.sink)
    await runtime.evaluate(<B />)
    off()
    expect(second.events[0].sequence).toBe(1)
    for (const event of events) {
      expect(typeof event.timestamp).toBe("number")
      expect(Math.abs(event.timestamp - Date.now())).toBeLessThan(60_000)
    }
  })

  it("names component spans by function name, AnonymousComponent, and Fragment", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    function Named() {
      return "n"
    }
    const Anonymous = [() => "a"][0]
    expect(Anonymous.name).toBe("")
    await expect(
      runtime.evaluate(
        <>
          <Named />
          <Anonymous />
          <Fragment>f</Fragment>
        </>,
      ),
    ).resolves.toBe("naf")
    const starts = events.filter((event) => event.type === "span.start")
    expect(starts.map((event) => [event.kind, event.name])).toEqual([
      ["evaluation", "evaluate"],
      ["component", "Fragment"],
      ["component", "Named"],
      ["component", "AnonymousComponent"],
      ["component", "Fragment"],
    ])
  })

  it("nests spans with parentSpanId and span.end reuses the start identity", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    function Outer() {
      return [<Inner />, <Inner />]
    }
    async function Inner() {
      await delay(2)
      return <Leaf />
    }
    function Leaf() {
      return "l"
    }
    await expect(runtime.evaluate(<Outer />)).resolves.toBe("ll")
    const starts = events.filter((event) => event.type === "span.start")
    const ends = events.filter((event) => event.type === "span.end")
    expect(starts).toHaveLength(6)
    expect(ends).toHaveLength(6)
    const byId = new Map(starts.map((event) => [event.spanId, event]))
    expect(byId.size).toBe(6)
    const outer = starts.find((event) => event.name === "Outer")
    expect(outer.parentSpanId).toBe("trace-0")
    const inners = starts.filter((event) => event.name === "Inner")
    expect(inners).toHaveLength(2)
    for (const inner of inners) expect(inner.parentSpanId).toBe(outer.spanId)
    const leaves = starts.filter((event) => event.name === "Leaf")
    expect(leaves.map((leaf) => leaf.parentSpanId).sort()).toEqual(inners.map((inner) => inner.spanId).sort())
    for (const end of ends) {
      const start = byId.get(end.spanId)
      expect(start).toBeDefined()
      expect(end.runId).toBe(start.runId)
      expect(end.kind).toBe(start.kind)
      expect(end.name).toBe(start.name)
      expect(end.parentSpanId).toBe(start.parentSpanId)
      expect(end.status).toBe("ok")
      expect(typeof end.durationMs).toBe("number")
      expect(end.durationMs).toBeGreaterThanOrEqual(0)
      expect(end.sequence).toBeGreaterThan(start.sequence)
      expect("status" in start).toBe(false)
      expect("durationMs" in start).toBe(false)
    }
    // A child span ends before its parent.
    const endSeq = new Map(ends.map((event) => [event.spanId, event.sequence]))
    for (const start of starts) {
      if (start.parentSpanId !== undefined) {
        expect(endSeq.get(start.spanId)).toBeLessThan(endSeq.get(start.parentSpanId)!)
      }
    }
    const innerEnd = ends.find((event) => event.name === "Inner")
    expect(innerEnd.durationMs).toBeGreaterThanOrEqual(1)
  })

  it("events are deeply frozen and attributes have a null prototype", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    const content = recorder(true)
    runtime.on("trace", sink)
    runtime.on("trace", content.sink)
    function Broken(): string {
      throw new Error("boom")
    }
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("boom")
    expect(events.length).toBeGreaterThan(0)
    for (const event of [...events, ...content.events]) {
      expect(isDeepFrozen(event)).toBe(true)
      expect(Object.getPrototypeOf(event.attributes)).toBe(null)
      expect(Object.isFrozen(event.attributes)).toBe(true)
      expect(() => {
        "use strict"
        event.name = "changed"
      }).toThrow(TypeError)
      expect(() => {
        event.attributes.extra = 1
      }).toThrow(TypeError)
    }
  })

  it("failed spans carry error.type; error.message only for content-capturing listeners", async () => {
    const runtime = new AmlRuntime()
    const redacted = recorder()
    const explicitFalse = recorder(false)
    const content = recorder(true)
    runtime.on("trace", redacted.sink)
    runtime.on("trace", explicitFalse.sink)
    runtime.on("trace", content.sink)
    function Broken(): string {
      throw new RangeError("secret detail")
    }
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("secret detail")
    for (const { events } of [redacted, explicitFalse, content]) {
      expect(events.map((event) => `${event.type}:${event.spanId}`)).toEqual([
        "span.start:trace-0",
        "span.start:trace-1",
        "span.end:trace-1",
        "span.end:trace-0",
      ])
    }
    for (const { events } of [redacted, explicitFalse]) {
      for (const end of events.filter((event) => event.type === "span.end")) {
        expect(end.status).toBe("error")
        expect(end.attributes["error.type"]).toBe("RangeError")
        expect("error.message" in end.attributes).toBe(false)
        expect(JSON.stringify(end)).not.toContain("secret detail")
      }
    }
    for (const end of content.events.filter((event) => event.type === "span.end")) {
      expect(end.status).toBe("error")
      expect(end.attributes["error.type"]).toBe("RangeError")
      expect(end.attributes["error.message"]).toBe("secret detail")
    }
    // Same identity and sequence for both views of one event.
    expect(content.events.map((event) => event.sequence)).toEqual(redacted.events.map((event) => event.sequence))
  })

  it("describes thrown non-Error values", async () => {
    const runtime = new AmlRuntime()
    const content = recorder(true)
    runtime.on("trace", content.sink)
    function ThrowsString(): string {
      throw "plain string"
    }
    await expect(runtime.evaluate(<ThrowsString />)).rejects.toBe("plain string")
    let end = content.events.find((event) => event.type === "span.end" && event.spanId === "trace-1")
    expect(end.attributes["error.type"]).toBe("string")
    expect(end.attributes["error.message"]).toBe("plain string")

    content.events.length = 0
    const thrown = { not: "an error" }
    function ThrowsObject(): string {
      throw thrown
    }
    await expect(runtime.evaluate(<ThrowsObject />)).rejects.toBe(thrown)
    end = content.events.find((event) => event.type === "span.end" && event.spanId === "trace-1")
    expect(end.attributes["error.type"]).toBe("object")
    expect(end.attributes["error.message"]).toBe("Non-Error object was thrown")
  })
})
