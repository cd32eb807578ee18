// Thenables at the component and listener boundaries (INVENTORY RT-2, OBS-1): a returned
// custom thenable runs inside the component's scope; a listener's returned thenable runs
// masked; a thrown or rejected thenable is an error value, never adopted.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Loop, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { ONLY_ACTIVE, rejection } from "./support/errors.js"
import { Counter } from "./support/loop.js"

/**
 * What `promise` rejected with, boxed: returning a thenable error from a `then` handler or
 * an async function would adopt it, which is exactly what AML must not do either.
 */
function rejectedWith(promise: Promise<unknown>): Promise<{ error: any }> {
  return promise.then(
    () => {
      throw new Error("expected the evaluation to reject")
    },
    (error: unknown) => ({ error }),
  )
}

function tryEvaluate(value: unknown): string {
  try {
    const promise = evaluate(value as any)
    promise.then(undefined, () => {})
    return "available"
  } catch (error: any) {
    return error instanceof EvaluationError && error.message === ONLY_ACTIVE ? "masked" : `other: ${error}`
  }
}

describe("a component's returned custom thenable (§2.3)", () => {
  it("reads then once and calls it in a later microtask inside the component's scope", async () => {
    const log: string[] = []
    function Lazy() {
      const thenable = {
        get then() {
          log.push("read then")
          return (ok: (value: unknown) => void, err: (error: unknown) => void) => {
            log.push("called then")
            evaluate("lazy").then(ok, err)
          }
        },
      }
      queueMicrotask(() => log.push("microtask queued by the component"))
      log.push("returning")
      return thenable
    }
    await expect(new AmlRuntime().evaluate(<Lazy />)).resolves.toBe("lazy")
    expect(log).toEqual(["returning", "read then", "microtask queued by the component", "called then"])
  })

  it("the scope stays active until the thenable settles, then closes", async () => {
    let late: () => string = () => "unset"
    function Slow() {
      return {
        then(ok: (value: unknown) => void) {
          setTimeout(() => {
            // Still active: the thenable has not settled yet.
            evaluate("later").then((text) => {
              late = () => tryEvaluate("after")
              ok(text)
            })
          }, 5)
        },
      }
    }
    await expect(new AmlRuntime().evaluate(<Slow />)).resolves.toBe("later")
    expect(late()).toBe("masked")
  })

  it("a Loop render result thenable runs inside the render's scope", async () => {
    const provider = { name: "p", run: async (request: any) => ({ text: `[${request.prompt}]` }) }
    const render = () => ({
      then(ok: (value: unknown) => void, err: (error: unknown) => void) {
        evaluate("from render").then((text) => ok(<Agent>{text}</Agent>), err)
      },
    })
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Loop initial={{ count: 0 }} render={render as any} schema={Counter} />)).resolves.toBe(
      "[from render]",
    )
  })
})

describe("thrown and rejected thenables are error values (§3)", () => {
  it("a thrown thenable that never calls back still rejects with that object", async () => {
    const thrown = { then() {} }
    const { error } = await rejectedWith(
      new AmlRuntime().evaluate(
        jsx(() => {
          throw thrown
        }, {}),
      ),
    )
    expect(error).toBe(thrown)
  })

  it("a thrown thenable that would resolve is not adopted", async () => {
    const thrown = {
      then(resolve: (value: string) => void) {
        resolve("x")
      },
    }
    const { error } = await rejectedWith(
      new AmlRuntime().evaluate(
        jsx(() => {
          throw thrown
        }, {}),
      ),
    )
    expect(error).toBe(thrown)
  })

  it("an Error with a then member is rethrown as is, from sync and async components", async () => {
    const make = () => Object.assign(new Error("real"), { then: (resolve: (v: string) => void) => resolve("swapped") })
    const syncError = make()
    const asyncError = make()
    function Sync() {
      throw syncError
    }
    async function Async() {
      throw asyncError
    }
    expect((await rejectedWith(new AmlRuntime().evaluate(<Sync />))).error).toBe(syncError)
    expect((await rejectedWith(new AmlRuntime().evaluate(<Async />))).error).toBe(asyncError)
    // Through a nested evaluation and the finish event too.
    const runtime = new AmlRuntime()
    const finishErrors: unknown[] = []
    runtime.on("finish", (event: any) => {
      finishErrors.push(event.error)
    })
    function Parent() {
      return evaluate(<Sync />)
    }
    expect((await rejectedWith(runtime.evaluate(<Parent />))).error).toBe(syncError)
    expect(finishErrors).toEqual([syncError])
  })

  it("aborting with a thenable reason rejects with that reason", async () => {
    const reason = { then() {} }
    const controller = new AbortController()
    let entered!: () => void
    const started = new Promise<void>((resolve) => (entered = resolve))
    async function Hang() {
      entered()
      await new Promise(() => {})
    }
    const run = new AmlRuntime().evaluate(<Hang />, { signal: controller.signal })
    await started
    controller.abort(reason)
    expect((await rejectedWith(run)).error).toBe(reason)
    // Pre-aborted, too.
    expect((await rejectedWith(new AmlRuntime().evaluate("x", { signal: controller.signal }))).error).toBe(reason)
  })
})

describe("listener thenables are masked (§2.6)", () => {
  it("a trace listener's returned thenable: then read once and called once, both masked", async () => {
    const runtime = new AmlRuntime()
    const seen: string[] = []
    let reads = 0
    let calls = 0
    runtime.on("trace", (event: any) => {
      if (event.type !== "span.start" || event.name !== "Child") return undefined
      seen.push(`listener ${tryEvaluate("x")}`)
      return {
        get then() {
          reads++
          seen.push(`then getter ${tryEvaluate("x")}`)
          return (resolve: () => void) => {
            calls++
            seen.push(`then call ${tryEvaluate("x")}`)
            resolve()
          }
        },
      }
    })
    function Child() {
      return "child"
    }
    function Parent() {
      // The Child span opens while Parent's scope is active: the listener must not see it.
      return evaluate(<Child />)
    }
    await expect(runtime.evaluate(<Parent />)).resolves.toBe("child")
    await new Promise((resolve) => setImmediate(resolve))
    expect(reads).toBe(1)
    expect(calls).toBe(1)
    expect(seen).toEqual(["listener masked", "then getter masked", "then call masked"])
  })

  it("a rejecting listener thenable goes to onTraceError", async () => {
    const failures: unknown[] = []
    const failure = new Error("listener thenable failed")
    const runtime = new AmlRuntime({
      onTraceError: (error: unknown) => {
        failures.push(error)
      },
    })
    runtime.on("trace", (event: any) =>
      event.type === "span.start" && event.spanId === "trace-0"
        ? {
            then(_resolve: unknown, reject: (error: unknown) => void) {
              reject(failure)
            },
          }
        : undefined,
    )
    await expect(runtime.evaluate("x")).resolves.toBe("x")
    await new Promise((resolve) => setImmediate(resolve))
    expect(failures).toEqual([failure])
  })
})

describe("an unawaited nested evaluation that fails before its component returns", () => {
  it("is the caller's unhandled rejection, not silently dropped, and the run still succeeds", () => {
    // In a child process: vitest fails the run on any unhandled rejection, which is exactly
    // what this asserts happens.
    const script = `
      import { AmlRuntime, evaluate } from "@aml-jsx/sdk"
      import { jsx } from "@aml-jsx/sdk/jsx-runtime"
      const unhandled = []
      process.on("unhandledRejection", (reason) => unhandled.push(reason.message))
      function Failing() { throw new Error("nested failed early") }
      async function Fire() {
        evaluate(jsx(Failing, {}))
        await new Promise((resolve) => setTimeout(resolve, 5))
        return "fired"
      }
      const text = await new AmlRuntime().evaluate(jsx(Fire, {}))
      await new Promise((resolve) => setTimeout(resolve, 5))
      console.log(JSON.stringify({ text, unhandled }))
    `
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
    })
    expect(child.stderr).toBe("")
    expect(JSON.parse(child.stdout)).toEqual({ text: "fired", unhandled: ["nested failed early"] })
  })

  it("one still pending when the component returns is joined, with no unhandled rejection", async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on("unhandledRejection", onUnhandled)
    try {
      const failure = new Error("nested failed late")
      async function Failing(): Promise<never> {
        await new Promise((resolve) => setTimeout(resolve, 5))
        throw failure
      }
      function Fire() {
        evaluate(<Failing />)
        return "fired"
      }
      expect(await rejection(new AmlRuntime().evaluate(<Fire />))).toBe(failure)
      await new Promise((resolve) => setTimeout(resolve, 5))
      expect(unhandled).toEqual([])
    } finally {
      process.off("unhandledRejection", onUnhandled)
    }
  })
})
