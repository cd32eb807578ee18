// Lifecycle events ("start" / "finish") (INVENTORY §2.1–2.5, RT-1 order of work). Every assertion
// is on observable behaviour of the public API.
import { afterEach, describe, expect, it, vi } from "vitest"

import { AmlRuntime } from "@aml-jsx/sdk"

import { delay } from "./support/async.js"
import { recorder, rejection, UUID } from "./support/events.js"

afterEach(() => {
  vi.restoreAllMocks()
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
