// Event listeners (INVENTORY §2.1–2.5): registering with on / once, and listeners running with
// component evaluate() masked. Every assertion is on observable behaviour of the public API.
import { afterEach, describe, expect, it, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { ONLY_ACTIVE } from "./support/errors.js"
import { recorder } from "./support/events.js"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("on / once", () => {
  it("calls start, finish, trace and context.events listeners with exactly one argument", async () => {
    const counts: Record<string, number[]> = { finish: [], localFinish: [], start: [], trace: [] }
    const counting = (name: string) =>
      function (this: unknown) {
        counts[name].push(arguments.length)
      }
    const runtime = new AmlRuntime({
      agentProvider: {
        name: "counting",
        run: async (_request: unknown, context: any) => {
          context.events.on("finish", counting("localFinish"))
          return { text: "ok" }
        },
      },
    })
    for (const name of ["start", "finish", "trace"]) runtime.on(name as "start", counting(name))
    await expect(runtime.evaluate(jsx(Agent, { children: "go" }))).resolves.toBe("ok")
    expect(counts.start).toEqual([1])
    expect(counts.finish).toEqual([1])
    expect(counts.localFinish).toEqual([1])
    expect(counts.trace.length).toBeGreaterThan(0)
    expect(new Set(counts.trace)).toEqual(new Set([1]))

    // The finish that follows a failed start gets one argument too.
    const failing = new AmlRuntime()
    const finishCounts: number[] = []
    failing.on("start", () => {
      throw new Error("start failed")
    })
    failing.on("finish", function (this: unknown) {
      finishCounts.push(arguments.length)
    })
    await expect(failing.evaluate("never")).rejects.toThrow("start failed")
    expect(finishCounts).toEqual([1])
  })

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
