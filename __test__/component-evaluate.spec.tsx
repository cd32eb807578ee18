// Component-local evaluate() (INVENTORY RT-2) and cross-copy realm sharing (RT-4).
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { afterAll, describe, expect, it } from "vitest"

import * as sdk from "@aml-jsx/sdk"
import { AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"
import * as jsxRuntime from "@aml-jsx/sdk/jsx-runtime"
import { rejection } from "./support/errors.js"

const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Calls `fn` and returns what it threw synchronously or what its promise rejected with. */
async function failureOf(fn: () => unknown): Promise<any> {
  let result: unknown
  try {
    result = fn()
  } catch (error) {
    return error
  }
  return rejection(Promise.resolve(result))
}

function expectOnlyActive(error: any) {
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.name).toBe("EvaluationError")
  expect(error.message).toBe(ONLY_ACTIVE)
}

describe("outside a component", () => {
  it("throws EvaluationError synchronously", () => {
    let returned: unknown = "not called"
    let thrown: any
    try {
      returned = evaluate("x")
    } catch (error) {
      thrown = error
    }
    expect(returned).toBe("not called")
    expectOnlyActive(thrown)
    expect(() => evaluate(<div />)).toThrow(ONLY_ACTIVE)
  })

  it("throws synchronously at top level of an async function too (no rejected promise)", async () => {
    await Promise.resolve()
    expect(() => evaluate("x")).toThrow(EvaluationError)
  })
})

describe("inside components", () => {
  it("works in a synchronous component and returns the nested text", async () => {
    const runtime = new AmlRuntime()
    function Child() {
      return ["chi", "ld"]
    }
    function Sync() {
      const promise = evaluate(<Child />)
      expect(promise).toBeInstanceOf(Promise)
      return promise
    }
    await expect(runtime.evaluate(<Sync />)).resolves.toBe("child")
  })

  it("works in an async component, including after awaits", async () => {
    const runtime = new AmlRuntime()
    async function Child() {
      await delay(1)
      return "child"
    }
    async function Parent() {
      await delay(2)
      const text = await evaluate(<Child />)
      await Promise.resolve()
      const second = await evaluate(["a", 1, null, true])
      return `[${text.toUpperCase()}|${second}]`
    }
    await expect(runtime.evaluate(<Parent />)).resolves.toBe("[CHILD|a1]")
  })

  it("nested text is not appended to the parent output unless returned", async () => {
    const runtime = new AmlRuntime()
    const seen: string[] = []
    function Hidden() {
      return "hidden"
    }
    function Parent() {
      evaluate(<Hidden />).then((text) => seen.push(text))
      return "shown"
    }
    async function AsyncParent() {
      seen.push(await evaluate("also hidden"))
      return "visible"
    }
    await expect(runtime.evaluate([<Parent />, "|", <AsyncParent />])).resolves.toBe("shown|visible")
    expect(seen).toEqual(["hidden", "also hidden"])
  })

  it("nested evaluations inherit the depth (maxDepth counts through evaluate())", async () => {
    function A() {
      return evaluate(<B />)
    }
    function B() {
      return evaluate(<C />)
    }
    function C() {
      return "deep"
    }
    await expect(new AmlRuntime({ maxDepth: 3 }).evaluate(<A />)).resolves.toBe("deep")
    const error = await rejection(new AmlRuntime({ maxDepth: 2 }).evaluate(<A />))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("AML evaluation exceeded maxDepth 2")
    // Arrays around the nested value add no depth.
    function D() {
      return evaluate([[<C />]])
    }
    await expect(new AmlRuntime({ maxDepth: 2 }).evaluate(<D />)).resolves.toBe("deep")
  })

  it("a nested component's span has the calling component's span as parent", async () => {
    const runtime = new AmlRuntime()
    const events: any[] = []
    runtime.on("trace", (event: any) => {
      events.push(event)
    })
    function Leaf() {
      return "leaf"
    }
    async function Caller() {
      await delay(1)
      return evaluate(<Leaf />)
    }
    function Root() {
      return ["<", <Caller />, ">"]
    }
    await expect(runtime.evaluate(<Root />)).resolves.toBe("<leaf>")
    const starts = events.filter((event) => event.type === "span.start")
    const root = starts.find((event) => event.name === "Root")
    const caller = starts.find((event) => event.name === "Caller")
    const leaf = starts.find((event) => event.name === "Leaf")
    expect(root.parentSpanId).toBe("trace-0")
    expect(caller.parentSpanId).toBe(root.spanId)
    expect(leaf.parentSpanId).toBe(caller.spanId)
    const leafEnd = events.find((event) => event.type === "span.end" && event.name === "Leaf")
    const callerEnd = events.find((event) => event.type === "span.end" && event.name === "Caller")
    expect(leafEnd.sequence).toBeLessThan(callerEnd.sequence)
  })
})

describe("lifetime of access", () => {
  it("a synchronous component loses access before its queued microtasks run", async () => {
    const runtime = new AmlRuntime()
    const outcomes: any[] = []
    function Sync() {
      queueMicrotask(() => {
        try {
          outcomes.push(["microtask", evaluate("late")])
        } catch (error) {
          outcomes.push(["microtask", error])
        }
      })
      Promise.resolve().then(() => {
        try {
          outcomes.push(["then", evaluate("late")])
        } catch (error) {
          outcomes.push(["then", error])
        }
      })
      return "sync"
    }
    await expect(runtime.evaluate(<Sync />)).resolves.toBe("sync")
    expect(outcomes.map(([where]) => where)).toEqual(["microtask", "then"])
    for (const [, outcome] of outcomes) expectOnlyActive(outcome)
  })

  it("an async component keeps access until its promise settles, then retained calls fail", async () => {
    const runtime = new AmlRuntime()
    let retained: (() => unknown) | undefined
    let timerOutcome: any = "timer did not run"
    let timerDone!: () => void
    const timerRan = new Promise<void>((resolve) => {
      timerDone = resolve
    })
    async function Async() {
      await delay(5)
      const first = await evaluate("a")
      await delay(5)
      const second = await evaluate("b")
      retained = () => evaluate("retained")
      setTimeout(() => {
        try {
          timerOutcome = evaluate("timer")
        } catch (error) {
          timerOutcome = error
        }
        timerDone()
      }, 20)
      return first + second
    }
    await expect(runtime.evaluate(<Async />)).resolves.toBe("ab")
    expectOnlyActive(await failureOf(retained!))
    await timerRan
    expectOnlyActive(timerOutcome)
  })

  it("a detached timer from a settled component fails while the evaluation is still running", async () => {
    const runtime = new AmlRuntime()
    let resume!: () => void
    const gate = new Promise<void>((resolve) => {
      resume = resolve
    })
    const outcome: any[] = []
    async function First() {
      await delay(1)
      // Runs in First's async context, after First settled but while Second still runs.
      setTimeout(() => {
        failureOf(() => evaluate("x")).then((error) => {
          outcome.push(error)
          resume()
        })
      }, 5)
      return "1"
    }
    async function Second() {
      await gate
      return "2"
    }
    await expect(runtime.evaluate([<First />, <Second />])).resolves.toBe("12")
    expect(outcome).toHaveLength(1)
    expectOnlyActive(outcome[0])
  })

  it("evaluate() resolves the active component from the calling context, not the closure", async () => {
    // A closure made by a settled component still works when called from inside another
    // active component: the binding is the AsyncLocalStorage of the call site.
    const runtime = new AmlRuntime()
    let retained: (() => Promise<string>) | undefined
    function First() {
      retained = () => evaluate("from closure")
      return "1"
    }
    async function Second() {
      await delay(1)
      return retained!()
    }
    await expect(runtime.evaluate([<First />, <Second />])).resolves.toBe("1from closure")
  })

  it("a returned custom thenable: `then` getter is read once inside the boundary", async () => {
    const runtime = new AmlRuntime()
    let reads = 0
    function Thenable() {
      return {
        get then() {
          reads++
          // Still inside the component boundary: evaluate() works here.
          const nested = evaluate("from getter")
          return (resolve: (value: unknown) => void, reject: (error: unknown) => void) => {
            nested.then(resolve, reject)
          }
        },
      }
    }
    await expect(runtime.evaluate(<Thenable />)).resolves.toBe("from getter")
    expect(reads).toBe(1)
  })

  it("a returned custom thenable keeps access until AML observes it settle", async () => {
    const runtime = new AmlRuntime()
    function Thenable() {
      // The reaction is registered inside the component, so it runs in its async context.
      const late = delay(10).then(() => evaluate("late text"))
      return {
        then(resolve: (value: unknown) => void, reject: (error: unknown) => void) {
          late.then(resolve, reject)
        },
      }
    }
    await expect(runtime.evaluate(<Thenable />)).resolves.toBe("late text")
  })

  it("a thenable object whose `then` is not callable is read once and is not renderable", async () => {
    const runtime = new AmlRuntime()
    let reads = 0
    function NotThenable() {
      return {
        get then() {
          reads++
          return 42
        },
      }
    }
    const error = await rejection(runtime.evaluate(<NotThenable />))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("AML cannot render a value of type object")
    expect(reads).toBe(1)
  })
})

describe("join semantics", () => {
  it("a component that does not await a nested evaluation still waits for it", async () => {
    const runtime = new AmlRuntime()
    const log: string[] = []
    async function Slow() {
      await delay(30)
      log.push("slow done")
      return "slow"
    }
    function Fire() {
      evaluate(<Slow />)
      log.push("fire returned")
      return "fire"
    }
    async function FireAsync() {
      evaluate(<Slow />)
      log.push("fire async returned")
      return "async"
    }
    function After() {
      log.push("after")
      return "after"
    }
    await expect(runtime.evaluate([<Fire />, <After />])).resolves.toBe("fireafter")
    expect(log).toEqual(["fire returned", "slow done", "after"])
    log.length = 0
    const finished: string[] = []
    runtime.once("finish", () => {
      finished.push(log.join(","))
    })
    await expect(runtime.evaluate([<FireAsync />, <After />])).resolves.toBe("asyncafter")
    expect(log).toEqual(["fire async returned", "slow done", "after"])
    expect(finished).toEqual(["fire async returned,slow done,after"])
  })

  it("component failure + nested failure: AggregateError with the component error first", async () => {
    const runtime = new AmlRuntime()
    const componentError = new Error("component")
    const nestedError = new RangeError("nested")
    async function FailSlow(): Promise<string> {
      await delay(10)
      throw nestedError
    }
    function Parent(): string {
      evaluate(<FailSlow />)
      throw componentError
    }
    const error = await rejection(runtime.evaluate(<Parent />))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML component and concurrent nested evaluations failed")
    expect(error.errors).toHaveLength(2)
    expect(error.errors[0]).toBe(componentError)
    expect(error.errors[1]).toBe(nestedError)
  })

  it("component failure with successful nested work rethrows the component error as is", async () => {
    const runtime = new AmlRuntime()
    const componentError = new Error("component only")
    let nestedDone = false
    async function Slow() {
      await delay(10)
      nestedDone = true
      return "ok"
    }
    async function Parent(): Promise<string> {
      evaluate(<Slow />)
      throw componentError
    }
    await expect(runtime.evaluate(<Parent />)).rejects.toBe(componentError)
    expect(nestedDone).toBe(true)
  })

  it("one nested failure only is rethrown as is", async () => {
    const runtime = new AmlRuntime()
    const nestedError = new TypeError("only nested")
    async function Fail(): Promise<string> {
      await delay(5)
      throw nestedError
    }
    function Parent() {
      evaluate(<Fail />)
      evaluate("fine")
      return "parent"
    }
    await expect(runtime.evaluate(<Parent />)).rejects.toBe(nestedError)
  })

  it("several nested failures give AggregateError 'AML component nested evaluations failed'", async () => {
    const runtime = new AmlRuntime()
    const first = new Error("first")
    const second = new Error("second")
    async function FailAfter({ ms, error }: { ms: number; error: Error }): Promise<string> {
      await delay(ms)
      throw error
    }
    async function Parent() {
      evaluate(<FailAfter ms={15} error={first} />)
      evaluate(<FailAfter ms={1} error={second} />)
      evaluate("fine")
      return "parent"
    }
    const error = await rejection(runtime.evaluate(<Parent />))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML component nested evaluations failed")
    // Call order, not settle order.
    expect(error.errors).toHaveLength(2)
    expect(error.errors[0]).toBe(first)
    expect(error.errors[1]).toBe(second)
  })

  it("a nested failure that the component awaited and caught does not fail it", async () => {
    const runtime = new AmlRuntime()
    async function Fail(): Promise<string> {
      await delay(1)
      throw new Error("caught by parent")
    }
    async function AsyncParent() {
      try {
        await evaluate(<Fail />)
      } catch (error: any) {
        return `recovered:${error.message}`
      }
      return "not reached"
    }
    function SyncParent() {
      return evaluate(<Fail />).catch(() => "sync recovered")
    }
    await expect(runtime.evaluate([<AsyncParent />, "|", <SyncParent />])).resolves.toBe(
      "recovered:caught by parent|sync recovered",
    )
  })

  it("Promise.all of several evaluate() calls preserves order", async () => {
    const runtime = new AmlRuntime()
    const settled: string[] = []
    async function After({ ms, text }: { ms: number; text: string }) {
      await delay(ms)
      settled.push(text)
      return text
    }
    async function Parent() {
      const parts = await Promise.all([
        evaluate(<After ms={20} text="a" />),
        evaluate(<After ms={1} text="b" />),
        evaluate(<After ms={10} text="c" />),
        evaluate("d"),
      ])
      return parts.join("-")
    }
    await expect(runtime.evaluate(<Parent />)).resolves.toBe("a-b-c-d")
    expect(settled).toEqual(["b", "c", "a"])
  })
})

describe("cross-copy (RT-4)", () => {
  const root = fileURLToPath(new URL("..", import.meta.url))
  const copyDir = mkdtempSync(join(tmpdir(), "aml-sdk-copy-"))
  afterAll(() => {
    rmSync(copyDir, { force: true, recursive: true })
  })

  async function loadCopy() {
    for (const entry of ["index.js", "package.json", "lib", "jsx-runtime"]) {
      cpSync(join(root, entry), join(copyDir, entry), { recursive: true })
    }
    cpSync(join(root, "native"), join(copyDir, "native"), {
      filter: (source) => !/\.d\.ts$/.test(source),
      recursive: true,
    })
    const copy = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "index.js")).href)
    const copyJsx = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "jsx-runtime", "index.js")).href)
    return { copy, copyJsx }
  }

  it("two physical copies interoperate through the realm registries", async () => {
    const { copy, copyJsx } = await loadCopy()
    // Really two module instances.
    expect(copy.AmlRuntime).not.toBe(sdk.AmlRuntime)
    expect(copy.evaluate).not.toBe(sdk.evaluate)
    expect(copy.EvaluationError).not.toBe(sdk.EvaluationError)
    expect(copyJsx.jsx).not.toBe(jsxRuntime.jsx)

    // The node brand is a shared Symbol.for key.
    const nodeB = copyJsx.jsx(function Leaf() {
      return "b-leaf"
    }, {})
    const nodeA = <span />
    expect(nodeB.$$typeof).toBe(Symbol.for("@aml-jsx/sdk/node"))
    expect((nodeA as any).$$typeof).toBe(Symbol.for("@aml-jsx/sdk/node"))
    expect(Object.keys(nodeB)).not.toContain("$$typeof")

    // A's runtime evaluates nodes built with B's jsx.
    const runtimeA = new AmlRuntime()
    await expect(runtimeA.evaluate(nodeB)).resolves.toBe("b-leaf")
    await expect(runtimeA.evaluate(copyJsx.jsx(copy.Fragment, { children: ["x", nodeB] }))).resolves.toBe("xb-leaf")

    // A component evaluated by A can call B's evaluate(), and vice versa.
    function UsesB() {
      return copy.evaluate(copyJsx.jsx(() => "via B", {}))
    }
    await expect(runtimeA.evaluate(<UsesB />)).resolves.toBe("via B")
    const runtimeB = new copy.AmlRuntime()
    function UsesA() {
      return evaluate(<UsesB />)
    }
    await expect(runtimeB.evaluate(copyJsx.jsx(UsesA, {}))).resolves.toBe("via B")

    // B's evaluate is still scoped: outside a component it throws B's EvaluationError.
    let thrown: any
    try {
      copy.evaluate("x")
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(copy.EvaluationError)
    expect(thrown.name).toBe("EvaluationError")
    expect(thrown.message).toBe(ONLY_ACTIVE)

    // Nested evaluation through B's evaluate stays in A's domain (trace parent, depth).
    const events: any[] = []
    runtimeA.on("trace", (event: any) => {
      events.push(event)
    })
    function Outer() {
      return copy.evaluate(nodeB)
    }
    await expect(runtimeA.evaluate(<Outer />)).resolves.toBe("b-leaf")
    const outer = events.find((event) => event.type === "span.start" && event.name === "Outer")
    const leaf = events.find((event) => event.type === "span.start" && event.name === "Leaf")
    expect(leaf.parentSpanId).toBe(outer.spanId)
    expect(leaf.runId).toBe(outer.runId)
    const depthError = await rejection(new AmlRuntime({ maxDepth: 1 }).evaluate(<Outer />))
    expect(depthError.message).toBe("AML evaluation exceeded maxDepth 1")

    // The ALS is one realm-wide value.
    const storage = (globalThis as any)[Symbol.for("@aml-jsx/sdk/component-evaluation-storage")]
    expect(storage?.constructor?.name).toBe("AsyncLocalStorage")
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, Symbol.for("@aml-jsx/sdk/component-evaluation-storage"))!
    expect(descriptor.enumerable).toBe(false)
    expect(descriptor.configurable).toBe(false)
  })
})
