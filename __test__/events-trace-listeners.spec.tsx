// Trace listeners (INVENTORY §2.1–2.5): captureContent, the trace runtime option, listener
// failures, onTraceError and console reporting. Every assertion is on observable behaviour of the
// public API.
import { afterEach, describe, expect, it, vi } from "vitest"

import { AmlRuntime } from "@aml-jsx/sdk"

import { drain, recorder } from "./support/events.js"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("trace events", () => {
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
