// Lifecycle events ("start" / "finish") and trace events (INVENTORY §2.1–2.5, RT-1 order
// of work). Every assertion is on observable behaviour of the public API.
import { afterEach, describe, expect, it, vi } from "vitest"

import { AmlRuntime, EvaluationError, Fragment, evaluate } from "@aml-jsx/sdk"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Waits for the rejection handlers of dropped listener promises to run. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve))

function recorder(captureContent?: boolean) {
  const events: any[] = []
  const sink: any = (event: any) => {
    events.push(event)
  }
  if (captureContent !== undefined) sink.captureContent = captureContent
  return { events, sink }
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected the promise to reject")
}

function isDeepFrozen(value: any, seen = new Set<any>()): boolean {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return true
  if (seen.has(value)) return true
  seen.add(value)
  if (!Object.isFrozen(value)) return false
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!
    if ("value" in descriptor && !isDeepFrozen(descriptor.value, seen)) return false
  }
  return true
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("on / once", () => {
  it("on returns an unsubscribe function that stops later calls", async () => {
    const runtime = new AmlRuntime()
    const calls: string[] = []
    const off = runtime.on("start", () => {
      calls.push("start")
    })
    expect(typeof off).toBe("function")
    await runtime.evaluate("a")
    expect(calls).toEqual(["start"])
    expect(off()).toBeUndefined()
    off() // idempotent
    await runtime.evaluate("b")
    expect(calls).toEqual(["start"])
  })

  it("on listeners see every evaluation of the runtime", async () => {
    const runtime = new AmlRuntime()
    const runIds: string[] = []
    runtime.on("finish", (event: any) => {
      runIds.push(event.runId)
    })
    await runtime.evaluate("a")
    await runtime.evaluate("b")
    await Promise.all([runtime.evaluate("c"), runtime.evaluate("d")])
    expect(runIds).toHaveLength(4)
    expect(new Set(runIds).size).toBe(4)
  })

  it("once fires for one evaluation only and also returns an unsubscribe function", async () => {
    const runtime = new AmlRuntime()
    const calls: string[] = []
    const off = runtime.once("finish", (event: any) => {
      calls.push(event.status)
    })
    expect(typeof off).toBe("function")
    await runtime.evaluate("a")
    await runtime.evaluate("b")
    expect(calls).toEqual(["ok"])

    const never = vi.fn()
    const offNever = runtime.once("start", never)
    offNever()
    await runtime.evaluate("c")
    expect(never).not.toHaveBeenCalled()
  })

  it("once is removed before its first call (a re-entrant evaluation does not see it)", async () => {
    const runtime = new AmlRuntime()
    const seen: string[] = []
    runtime.once("start", async (event: any) => {
      seen.push(event.runId)
      // Re-entrant evaluation from inside the listener: the once listener is already gone.
      await runtime.evaluate("inner")
    })
    await runtime.evaluate("outer")
    expect(seen).toHaveLength(1)
  })

  it("a once trace listener receives only the first trace event", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.once("trace", sink)
    function Child() {
      return "x"
    }
    await runtime.evaluate(<Child />)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: "span.start", spanId: "trace-0", sequence: 1 })
  })

  it("rejects unknown event names and non-function listeners", () => {
    const runtime = new AmlRuntime()
    expect(() => runtime.on("nope" as any, () => {})).toThrow(TypeError)
    expect(() => runtime.on("start", "x" as any)).toThrow(TypeError)
  })
})

describe("start", () => {
  it("runs start listeners serially (awaited) before the tree", async () => {
    const runtime = new AmlRuntime()
    const log: string[] = []
    runtime.on("start", async () => {
      log.push("first:begin")
      await delay(20)
      log.push("first:end")
    })
    runtime.on("start", async () => {
      log.push("second:begin")
      await delay(5)
      log.push("second:end")
    })
    function Tree() {
      log.push("tree")
      return "done"
    }
    await expect(runtime.evaluate(<Tree />)).resolves.toBe("done")
    expect(log).toEqual(["first:begin", "first:end", "second:begin", "second:end", "tree"])
  })

  it("is fail-fast: the tree is not evaluated, finish runs with the error, no trace exists", async () => {
    const runtime = new AmlRuntime()
    const failure = new Error("start listener failed")
    const later = vi.fn()
    const tree = vi.fn(() => "never")
    const finishes: any[] = []
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    runtime.on("start", () => {
      throw failure
    })
    runtime.on("start", later)
    runtime.on("finish", (event: any) => {
      finishes.push(event)
    })
    const Tree = tree as any
    const error = await rejection(runtime.evaluate(<Tree />))
    expect(error).toBe(failure)
    expect(later).not.toHaveBeenCalled()
    expect(tree).not.toHaveBeenCalled()
    expect(finishes).toHaveLength(1)
    expect(finishes[0].status).toBe("error")
    expect(finishes[0].error).toBe(failure)
    expect(events).toEqual([])
  })

  it("an async start rejection also prevents the tree and reaches finish", async () => {
    const runtime = new AmlRuntime()
    const failure = new RangeError("async start failure")
    const tree = vi.fn(() => "never")
    const statuses: string[] = []
    runtime.on("start", async () => {
      await delay(1)
      throw failure
    })
    runtime.on("finish", (event: any) => {
      statuses.push(event.status)
    })
    const Tree = tree as any
    await expect(runtime.evaluate(<Tree />)).rejects.toBe(failure)
    expect(tree).not.toHaveBeenCalled()
    expect(statuses).toEqual(["error"])
  })

  it("start and finish events are frozen, carry a UUID runId and the signal", async () => {
    const runtime = new AmlRuntime()
    const starts: any[] = []
    const finishes: any[] = []
    const traces: any[] = []
    runtime.on("start", (event: any) => {
      starts.push(event)
    })
    runtime.on("finish", (event: any) => {
      finishes.push(event)
    })
    runtime.on("trace", (event: any) => {
      traces.push(event)
    })
    const controller = new AbortController()
    await expect(runtime.evaluate("ok", { signal: controller.signal })).resolves.toBe("ok")
    expect(starts).toHaveLength(1)
    expect(finishes).toHaveLength(1)
    const [start] = starts
    const [finish] = finishes
    expect(Object.isFrozen(start)).toBe(true)
    expect(Object.isFrozen(finish)).toBe(true)
    expect(start.runId).toMatch(UUID)
    expect(Object.keys(start).sort()).toEqual(["runId", "signal"])
    expect(start.signal).toBe(controller.signal)
    expect(finish.signal).toBe(controller.signal)
    expect(finish.runId).toBe(start.runId)
    expect(finish.status).toBe("ok")
    expect("error" in finish).toBe(false)
    expect(Object.keys(finish).sort()).toEqual(["runId", "signal", "status"])
    expect(traces.length).toBeGreaterThan(0)
    for (const event of traces) expect(event.runId).toBe(start.runId)

    // Without a caller signal, listeners still receive an (un-aborted) AbortSignal.
    await runtime.evaluate("again")
    expect(starts[1].signal).toBeInstanceOf(AbortSignal)
    expect(starts[1].signal.aborted).toBe(false)
    expect(finishes[1].signal).toBe(starts[1].signal)
    expect(starts[1].runId).toMatch(UUID)
    expect(starts[1].runId).not.toBe(start.runId)
  })

  it("the finish error is present only on failure, and is the thrown value", async () => {
    const runtime = new AmlRuntime()
    const finishes: any[] = []
    runtime.on("finish", (event: any) => {
      finishes.push(event)
    })
    const failure = new TypeError("component failed")
    function Broken(): string {
      throw failure
    }
    await expect(runtime.evaluate(<Broken />)).rejects.toBe(failure)
    expect(finishes[0]).toEqual({ error: failure, runId: expect.stringMatching(UUID), signal: expect.any(AbortSignal), status: "error" })
    expect(finishes[0].error).toBe(failure)
    expect(Object.isFrozen(finishes[0])).toBe(true)
  })
})

describe("finish", () => {
  it("runs every listener even when some fail; a single failure is rethrown as is", async () => {
    const runtime = new AmlRuntime()
    const failure = new Error("finish failed")
    const calls: string[] = []
    runtime.on("finish", () => {
      calls.push("a")
      throw failure
    })
    runtime.on("finish", async () => {
      await delay(1)
      calls.push("b")
    })
    const error = await rejection(runtime.evaluate("fine"))
    expect(error).toBe(failure)
    expect(calls).toEqual(["a", "b"])
  })

  it("several finish failures give AggregateError 'AML finish listeners failed'", async () => {
    const runtime = new AmlRuntime()
    const first = new Error("first")
    const second = new Error("second")
    runtime.on("finish", () => {
      throw first
    })
    runtime.on("finish", () => {})
    runtime.on("finish", async () => {
      throw second
    })
    const error = await rejection(runtime.evaluate("fine"))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML finish listeners failed")
    expect(error.errors).toEqual([first, second])
    expect(error.errors[0]).toBe(first)
    expect(error.errors[1]).toBe(second)
  })

  it("evaluation and finish failures give AggregateError 'AML evaluation and finish listeners both failed'", async () => {
    const runtime = new AmlRuntime()
    const evaluationFailure = new Error("tree failed")
    const finishFailure = new Error("finish failed")
    const statuses: string[] = []
    runtime.on("finish", (event: any) => {
      statuses.push(event.status)
      throw finishFailure
    })
    function Broken(): string {
      throw evaluationFailure
    }
    const error = await rejection(runtime.evaluate(<Broken />))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML evaluation and finish listeners both failed")
    expect(error.errors).toHaveLength(2)
    expect(error.errors[0]).toBe(evaluationFailure)
    expect(error.errors[1]).toBe(finishFailure)
    expect(statuses).toEqual(["error"])
  })

  it("evaluation failure plus several finish failures nests the finish AggregateError", async () => {
    const runtime = new AmlRuntime()
    const evaluationFailure = new Error("tree failed")
    const a = new Error("a")
    const b = new Error("b")
    runtime.on("finish", () => {
      throw a
    })
    runtime.on("finish", () => {
      throw b
    })
    function Broken(): string {
      throw evaluationFailure
    }
    const error = await rejection(runtime.evaluate(<Broken />))
    expect(error.message).toBe("AML evaluation and finish listeners both failed")
    expect(error.errors[0]).toBe(evaluationFailure)
    expect(error.errors[1]).toBeInstanceOf(AggregateError)
    expect(error.errors[1].message).toBe("AML finish listeners failed")
    expect(error.errors[1].errors).toEqual([a, b])
  })

  it("finish happens after the whole tree, including slow async components", async () => {
    const runtime = new AmlRuntime()
    const log: string[] = []
    runtime.on("finish", () => {
      log.push("finish")
    })
    async function Slow() {
      await delay(25)
      log.push("slow")
      return "s"
    }
    function Fast() {
      log.push("fast")
      return "f"
    }
    await expect(runtime.evaluate([<Slow />, <Fast />])).resolves.toBe("sf")
    expect(log).toEqual(["slow", "fast", "finish"])
  })

  it("the root span closes after finish listeners (ok run)", async () => {
    const runtime = new AmlRuntime()
    const log: string[] = []
    const roots: any[] = []
    runtime.on("trace", (event: any) => {
      log.push(`${event.type}:${event.spanId}`)
      if (event.spanId === "trace-0") roots.push(event)
    })
    runtime.on("finish", async () => {
      await delay(5)
      log.push("finish")
    })
    function Leaf() {
      return "leaf"
    }
    await runtime.evaluate(<Leaf />)
    expect(log).toEqual(["span.start:trace-0", "span.start:trace-1", "span.end:trace-1", "finish", "span.end:trace-0"])
    expect(roots).toHaveLength(2)
    for (const root of roots) {
      expect(root.kind).toBe("evaluation")
      expect(root.name).toBe("evaluate")
      expect(root.spanId).toBe("trace-0")
      expect("parentSpanId" in root).toBe(false)
    }
    expect(roots[1].status).toBe("ok")
    expect(roots[1].attributes["error.type"]).toBeUndefined()
  })

  it("the root span closes with error when only a finish listener failed", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    runtime.on("finish", () => {
      throw new SyntaxError("finish only")
    })
    await expect(runtime.evaluate("fine")).rejects.toThrow("finish only")
    const end = events.find((event) => event.type === "span.end" && event.spanId === "trace-0")
    expect(end).toBeDefined()
    expect(end.status).toBe("error")
    expect(end.attributes["error.type"]).toBe("SyntaxError")
    expect(events.at(-1)).toBe(end)
  })

  it("the root span closes with error when the evaluation failed", async () => {
    const runtime = new AmlRuntime()
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    function Broken(): string {
      throw new RangeError("tree")
    }
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("tree")
    const end = events.at(-1)
    expect(end).toMatchObject({ type: "span.end", spanId: "trace-0", kind: "evaluation", status: "error" })
    expect(end.attributes["error.type"]).toBe("RangeError")
  })
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

  it("captureContent is read once, at registration", async () => {
    const runtime = new AmlRuntime()
    let reads = 0
    const events: any[] = []
    const sink: any = (event: any) => {
      events.push(event)
    }
    let capture = false
    Object.defineProperty(sink, "captureContent", {
      get() {
        reads++
        return capture
      },
    })
    runtime.on("trace", sink)
    expect(reads).toBe(1)
    capture = true
    function Broken(): string {
      throw new Error("hidden")
    }
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("hidden")
    expect(reads).toBe(1)
    const end = events.find((event) => event.type === "span.end")
    expect(end.attributes["error.type"]).toBe("Error")
    expect("error.message" in end.attributes).toBe(false)
  })

  it("captureContent errors are TypeErrors with exact messages", () => {
    const runtime = new AmlRuntime()
    const cause = new Error("getter failed")
    const throwing: any = () => {}
    Object.defineProperty(throwing, "captureContent", {
      get() {
        throw cause
      },
    })
    let error: any
    try {
      runtime.on("trace", throwing)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe("trace listener captureContent could not be read")

    const notBoolean: any = () => {}
    notBoolean.captureContent = "yes"
    expect(() => runtime.on("trace", notBoolean)).toThrow(
      new TypeError("trace listener captureContent must be a boolean"),
    )
    expect(() => runtime.once("trace", notBoolean)).toThrow("trace listener captureContent must be a boolean")
    expect(() => new AmlRuntime({ trace: notBoolean })).toThrow("trace listener captureContent must be a boolean")
    expect(() => new AmlRuntime({ trace: throwing })).toThrow("trace listener captureContent could not be read")
  })

  it("the trace runtime option registers a runtime-wide trace listener", async () => {
    const { events, sink } = recorder()
    const runtime = new AmlRuntime({ trace: sink })
    function Leaf() {
      return "x"
    }
    await runtime.evaluate(<Leaf />)
    await runtime.evaluate("y")
    const roots = events.filter((event) => event.spanId === "trace-0" && event.type === "span.start")
    expect(roots).toHaveLength(2)
    expect(roots[0].runId).not.toBe(roots[1].runId)
    expect(events.some((event) => event.name === "Leaf")).toBe(true)
  })

  it("a synchronously throwing trace listener stops neither later listeners nor the run", async () => {
    const handled: any[] = []
    const runtime = new AmlRuntime({
      onTraceError: (error: unknown, event: any) => {
        handled.push([error, event])
      },
    })
    const failure = new Error("sink failed")
    runtime.on("trace", () => {
      throw failure
    })
    const { events, sink } = recorder()
    runtime.on("trace", sink)
    function Leaf() {
      return "x"
    }
    await expect(runtime.evaluate(<Leaf />)).resolves.toBe("x")
    expect(events).toHaveLength(4)
    expect(handled).toHaveLength(4)
    for (const [error] of handled) expect(error).toBe(failure)
    expect(handled.map(([, event]) => event.sequence)).toEqual([1, 2, 3, 4])
  })

  it("rejected listener promises go to onTraceError(error, redactedEvent); its own throw is swallowed", async () => {
    const handled: any[] = []
    const runtime = new AmlRuntime({
      onTraceError: (error: unknown, event: any) => {
        handled.push([error, event])
        throw new Error("handler failed too")
      },
    })
    const failure = new Error("async sink failed")
    const sink: any = async () => {
      throw failure
    }
    sink.captureContent = true
    runtime.on("trace", sink)
    function Broken(): string {
      throw new Error("private")
    }
    const spy = vi.spyOn(console, "error").mockImplementation(() => {})
    await expect(runtime.evaluate(<Broken />)).rejects.toThrow("private")
    await drain()
    expect(handled).toHaveLength(4)
    for (const [error, event] of handled) {
      expect(error).toBe(failure)
      expect(Object.isFrozen(event)).toBe(true)
      // The handler receives the redacted event even for a content-capturing listener.
      expect("error.message" in event.attributes).toBe(false)
    }
    expect(handled[3][1]).toMatchObject({ type: "span.end", spanId: "trace-0", status: "error" })
    expect(spy).not.toHaveBeenCalled()
  })

  it("an onTraceError that returns a rejected promise does not surface it", async () => {
    const runtime = new AmlRuntime({
      onTraceError: async () => {
        throw new Error("async handler failure")
      },
    })
    runtime.on("trace", () => {
      throw new Error("sink")
    })
    await expect(runtime.evaluate("x")).resolves.toBe("x")
    await drain()
  })

  it("without onTraceError, exactly one console.error line per evaluation", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {})
    const runtime = new AmlRuntime()
    runtime.on("trace", () => {
      throw new Error("sync sink failure")
    })
    function Leaf() {
      return "x"
    }
    await expect(runtime.evaluate(<Leaf />)).resolves.toBe("x")
    await drain()
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0]).toEqual(["[aml] trace listener failed at span.start trace-0"])
    await expect(runtime.evaluate(<Leaf />)).resolves.toBe("x")
    await drain()
    expect(spy).toHaveBeenCalledTimes(2)
    expect(spy.mock.calls[1]).toEqual(["[aml] trace listener failed at span.start trace-0"])
  })

  it("without onTraceError, a rejecting listener also gives one console.error line", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {})
    const runtime = new AmlRuntime()
    const seen: string[] = []
    runtime.on("trace", async (event: any) => {
      // Fail only from the first component span on, to check the reported identity.
      if (event.spanId === "trace-1") throw new Error("async sink failure")
    })
    runtime.on("trace", (event: any) => {
      seen.push(`${event.type}:${event.spanId}`)
    })
    function Leaf() {
      return "x"
    }
    await expect(runtime.evaluate(<Leaf />)).resolves.toBe("x")
    await drain()
    expect(seen).toHaveLength(4)
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0]).toEqual(["[aml] trace listener failed at span.start trace-1"])
  })

  it("trace listener promises are not awaited", async () => {
    const runtime = new AmlRuntime()
    let resolved = 0
    runtime.on("trace", async () => {
      await new Promise(() => {}) // never settles
      resolved++
    })
    await expect(runtime.evaluate("x")).resolves.toBe("x")
    expect(resolved).toBe(0)
  })
})

describe("listeners run with component evaluate() masked", () => {
  it("start, finish and trace listeners of an evaluation started inside a component cannot call evaluate()", async () => {
    const outer = new AmlRuntime()
    const inner = new AmlRuntime()
    const outcomes: Record<string, any[]> = { finish: [], start: [], trace: [] }
    const probe = (name: string) => (event: any) => {
      let outcome: any
      try {
        outcome = evaluate("from listener")
        // Keep a stray promise from becoming an unhandled rejection.
        Promise.resolve(outcome).catch(() => {})
      } catch (error) {
        outcome = error
      }
      outcomes[name].push([event.type ?? name, outcome])
    }
    inner.on("start", probe("start"))
    inner.on("finish", probe("finish"))
    inner.on("trace", probe("trace"))
    function Nested() {
      return "n"
    }
    function Host() {
      // Calls another runtime while this component's evaluate() scope is active, so the
      // inner listeners start synchronously inside the component's async context.
      return inner.evaluate(<Nested />)
    }
    await expect(outer.evaluate(<Host />)).resolves.toBe("n")
    for (const name of ["start", "finish", "trace"]) {
      expect(outcomes[name].length).toBeGreaterThan(0)
      for (const [, outcome] of outcomes[name]) {
        expect(outcome).toBeInstanceOf(EvaluationError)
        expect(outcome.message).toBe(ONLY_ACTIVE)
      }
    }
  })

  it("trace listeners dispatched during a component-local evaluate() cannot re-enter it", async () => {
    const runtime = new AmlRuntime()
    const outcomes: any[] = []
    runtime.on("trace", (event: any) => {
      if (event.name !== "Child" || event.type !== "span.start") return
      try {
        const result = evaluate("re-entrant")
        Promise.resolve(result).catch(() => {})
        outcomes.push(result)
      } catch (error) {
        outcomes.push(error)
      }
    })
    function Child() {
      return "c"
    }
    function Parent() {
      // The nested evaluation enters <Child /> synchronously, inside Parent's scope.
      return evaluate(<Child />)
    }
    await expect(runtime.evaluate(<Parent />)).resolves.toBe("c")
    expect(outcomes).toHaveLength(1)
    expect(outcomes[0]).toBeInstanceOf(EvaluationError)
    expect(outcomes[0].message).toBe(ONLY_ACTIVE)
  })
})
