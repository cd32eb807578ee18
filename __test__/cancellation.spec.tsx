// Cancellation (INVENTORY LIM-2, RT-1 pre-abort rule) and the Rust panic guard.
import { describe, expect, it, vi } from "vitest"

import { AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { hookLocation, panicForTest } from "./support/native-test-hooks.js"
import { rejection } from "./support/errors.js"

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const never = () => new Promise<never>(() => {})

function observed(runtime: AmlRuntime) {
  const log: any[] = []
  const starts: any[] = []
  const finishes: any[] = []
  const traces: any[] = []
  runtime.on("start", (event: any) => {
    starts.push(event)
  })
  runtime.on("finish", (event: any) => {
    finishes.push(event)
    log.push("finish")
  })
  const sink: any = (event: any) => {
    traces.push(event)
  }
  sink.captureContent = true
  runtime.on("trace", sink)
  return { finishes, log, starts, traces }
}

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe("pre-aborted signal", () => {
  it("rejects with exactly signal.reason before any event", async () => {
    const runtime = new AmlRuntime()
    const { finishes, starts, traces } = observed(runtime)
    const component = vi.fn(() => "never")
    const Tree = component as any
    const reason = { custom: "reason object" }
    const controller = new AbortController()
    controller.abort(reason)
    const error = await rejection(runtime.evaluate(<Tree />, { signal: controller.signal }))
    expect(error).toBe(reason)
    expect(component).not.toHaveBeenCalled()
    expect(starts).toEqual([])
    expect(finishes).toEqual([])
    expect(traces).toEqual([])
  })

  it("preserves the default AbortError reason and primitive reasons", async () => {
    const runtime = new AmlRuntime()
    const { starts } = observed(runtime)
    const controller = new AbortController()
    controller.abort()
    const error = await rejection(runtime.evaluate("x", { signal: controller.signal }))
    expect(error).toBe(controller.signal.reason)
    expect(error.name).toBe("AbortError")

    await expect(runtime.evaluate("x", { signal: AbortSignal.abort("just a string") })).rejects.toBe("just a string")
    expect(starts).toEqual([])
  })

  it("still returns a promise (no synchronous throw)", async () => {
    const runtime = new AmlRuntime()
    const signal = AbortSignal.abort(new Error("pre"))
    let result: any
    expect(() => {
      result = runtime.evaluate("x", { signal })
    }).not.toThrow()
    expect(result).toBeInstanceOf(Promise)
    await expect(result).rejects.toBe(signal.reason)
  })

  it("a signal aborted by a start listener stops before the root span (second abort check)", async () => {
    const runtime = new AmlRuntime()
    const controller = new AbortController()
    const reason = new Error("aborted in start")
    const { finishes, traces } = observed(runtime)
    runtime.on("start", () => {
      controller.abort(reason)
    })
    const component = vi.fn(() => "never")
    const Tree = component as any
    await expect(runtime.evaluate(<Tree />, { signal: controller.signal })).rejects.toBe(reason)
    expect(component).not.toHaveBeenCalled()
    expect(traces).toEqual([])
    expect(finishes).toHaveLength(1)
    expect(finishes[0].status).toBe("error")
    expect(finishes[0].error).toBe(reason)
  })

  it("rejects a non-AbortSignal signal with a TypeError", async () => {
    const runtime = new AmlRuntime()
    await expect(runtime.evaluate("x", { signal: {} as any })).rejects.toThrow(
      new TypeError("evaluate() signal must be an AbortSignal"),
    )
  })
})

describe("abort during evaluation", () => {
  it("rejects with the reason, runs finish with it, invokes nothing after the abort", async () => {
    const runtime = new AmlRuntime()
    const { finishes, log } = observed(runtime)
    const controller = new AbortController()
    const reason = new Error("caller cancelled")
    const entered = deferred()
    const later = vi.fn(() => "later")
    const Later = later as any
    async function Hang() {
      log.push("hang")
      entered.resolve()
      await never()
      return "unreachable"
    }
    const run = runtime.evaluate(["a", <Hang />, <Later />, <Later />], { signal: controller.signal })
    await entered.promise
    controller.abort(reason)
    const error = await rejection(run)
    expect(error).toBe(reason)
    expect(later).not.toHaveBeenCalled()
    expect(finishes).toHaveLength(1)
    expect(finishes[0].status).toBe("error")
    expect(finishes[0].error).toBe(reason)
    expect(finishes[0].signal).toBe(controller.signal)
    expect(log).toEqual(["hang", "finish"])
    await delay(10)
    expect(later).not.toHaveBeenCalled()
  })

  it("an abort inside a synchronous component stops before the next frame", async () => {
    const runtime = new AmlRuntime()
    const { finishes } = observed(runtime)
    const controller = new AbortController()
    const reason = new Error("aborted synchronously")
    const later = vi.fn(() => "later")
    const Later = later as any
    function AbortNow() {
      controller.abort(reason)
      return ["text", <Later />]
    }
    await expect(runtime.evaluate([<AbortNow />, <Later />], { signal: controller.signal })).rejects.toBe(reason)
    expect(later).not.toHaveBeenCalled()
    expect(finishes[0].error).toBe(reason)

    // Same inside a component-local nested evaluation. Parent's returned promise is dropped
    // by the aborted root task; it must not become an unhandled rejection (vitest fails the
    // run on one).
    const nestedController = new AbortController()
    function NestedAbort() {
      nestedController.abort(reason)
      return <Later />
    }
    function Parent() {
      return evaluate([<NestedAbort />, <Later />])
    }
    await expect(runtime.evaluate(<Parent />, { signal: nestedController.signal })).rejects.toBe(reason)
    expect(later).not.toHaveBeenCalled()
  })

  it("a component that resumes after the abort does not make the run continue", async () => {
    const runtime = new AmlRuntime()
    const controller = new AbortController()
    const reason = new Error("stop")
    const entered = deferred()
    const release = deferred()
    const later = vi.fn(() => "later")
    const Later = later as any
    const after: string[] = []
    async function Slow() {
      entered.resolve()
      await release.promise
      after.push("slow resumed")
      return <Later />
    }
    const run = runtime.evaluate([<Slow />, <Later />], { signal: controller.signal })
    await entered.promise
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    release.resolve()
    await delay(10)
    expect(after).toEqual(["slow resumed"])
    expect(later).not.toHaveBeenCalled()
  })

  it("an abort during a component-local nested evaluation leaves no task running", async () => {
    const runtime = new AmlRuntime()
    const { finishes } = observed(runtime)
    const controller = new AbortController()
    const reason = { why: "nested abort" }
    const entered = deferred()
    const release = deferred()
    const later = vi.fn(() => "later")
    const Later = later as any
    const parentOutcome: any[] = []
    async function Inner() {
      entered.resolve()
      await release.promise
      return "inner"
    }
    async function Parent() {
      try {
        return await evaluate([<Inner />, <Later />])
      } catch (error) {
        parentOutcome.push(error)
        // Trying to continue after the abort must not run anything either.
        try {
          await evaluate(<Later />)
        } catch (second) {
          parentOutcome.push(second)
        }
        throw error
      }
    }
    const run = runtime.evaluate([<Parent />, <Later />], { signal: controller.signal })
    await entered.promise
    controller.abort(reason)
    const error = await rejection(run)
    expect(error).toBe(reason)
    // Let the never-cancelled user promise settle: neither task may resume.
    release.resolve()
    await delay(20)
    expect(later).not.toHaveBeenCalled()
    expect(parentOutcome[0]).toBe(reason)
    expect(parentOutcome).toHaveLength(2)
    const second = parentOutcome[1]
    // Either the signal's reason (task checks abort first) or the closed-scope error.
    if (second !== reason) {
      expect(second).toBeInstanceOf(EvaluationError)
      expect(second.message).toBe("evaluate() is only available while an AML component is active")
    }
    expect(finishes).toHaveLength(1)
    expect(finishes[0].error).toBe(reason)
  })

  it("signal.reason identity is preserved for non-Error reasons", async () => {
    for (const reason of ["a string", 42, Symbol("s"), null, { plain: true }]) {
      const runtime = new AmlRuntime()
      const controller = new AbortController()
      const entered = deferred()
      async function Hang() {
        entered.resolve()
        return never()
      }
      const run = runtime.evaluate(<Hang />, { signal: controller.signal })
      await entered.promise
      controller.abort(reason)
      const error = await rejection(run)
      expect(error).toBe(reason)
    }
  })

  it("an aborted run still closes every open span and the root span with error", async () => {
    const runtime = new AmlRuntime()
    const { log, traces } = observed(runtime)
    runtime.on("trace", (event: any) => {
      if (event.spanId === "trace-0" && event.type === "span.end") log.push("root end")
    })
    const controller = new AbortController()
    const reason = new RangeError("aborted mid-run")
    const entered = deferred()
    async function Hang() {
      entered.resolve()
      return never()
    }
    function Outer() {
      return <Hang />
    }
    const run = runtime.evaluate(<Outer />, { signal: controller.signal })
    await entered.promise
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    const starts = traces.filter((event) => event.type === "span.start")
    const ends = traces.filter((event) => event.type === "span.end")
    expect(starts.map((event) => event.name)).toEqual(["evaluate", "Outer", "Hang"])
    expect(ends.map((event) => event.name)).toEqual(["Hang", "Outer", "evaluate"])
    for (const end of ends) {
      expect(end.status).toBe("error")
      expect(end.attributes["error.type"]).toBe("RangeError")
      expect(end.attributes["error.message"]).toBe("aborted mid-run")
    }
    expect(ends.at(-1)).toMatchObject({ spanId: "trace-0", kind: "evaluation" })
    expect(log).toEqual(["finish", "root end"])
  })

  it("aborting after the run settled changes nothing", async () => {
    const runtime = new AmlRuntime()
    const controller = new AbortController()
    await expect(runtime.evaluate("done", { signal: controller.signal })).resolves.toBe("done")
    controller.abort(new Error("late"))
    await expect(runtime.evaluate("again")).resolves.toBe("again")
  })

  it("concurrent evaluations are cancelled independently", async () => {
    const runtime = new AmlRuntime()
    const controller = new AbortController()
    const reason = new Error("only the first")
    const entered = deferred()
    async function Hang() {
      entered.resolve()
      return never()
    }
    async function Slow() {
      await delay(15)
      return "slow"
    }
    const first = runtime.evaluate(<Hang />, { signal: controller.signal })
    const second = runtime.evaluate(<Slow />)
    await entered.promise
    controller.abort(reason)
    await expect(first).rejects.toBe(reason)
    await expect(second).resolves.toBe("slow")
  })
})

describe("Rust panics", () => {
  it("a panic becomes a thrown JS Error and the process continues", async () => {
    let thrown: any
    try {
      panicForTest("deliberate test panic")
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(Error)
    // The hook keeps the panic's message and its source location (src/boundary/panic_report.rs).
    expect(thrown.message).toBe(`AML engine panicked: deliberate test panic ${hookLocation('panic!("{message}")')}`)
    // The engine still works afterwards, repeatedly.
    expect(() => panicForTest("again")).toThrow(/AML engine panicked/)
    function Still() {
      return "alive"
    }
    await expect(new AmlRuntime().evaluate(<Still />)).resolves.toBe("alive")
  })
})
