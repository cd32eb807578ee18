// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — thenables: native promises and custom
// thenables, read once and called later.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { rejection } from "./support/errors.js"
import { expectEvaluationError, run } from "./support/evaluator.js"

describe("thenables", () => {
  test("native promises are awaited, including nested ones", async () => {
    expect(await run(Promise.resolve("a"))).toBe("a")
    expect(await run([Promise.resolve("a"), sleep(5).then(() => "b"), "c"])).toBe("abc")
    expect(await run(Promise.resolve([Promise.resolve(1), Promise.resolve([Promise.resolve(2)])]))).toBe("12")
  })

  test("a promise resolving to a node evaluates the node", async () => {
    const component = vi.fn(() => "from node")
    const Component = component as unknown as () => string
    expect(await run(Promise.resolve(<Component />))).toBe("from node")
    expect(component).toHaveBeenCalledTimes(1)
  })

  function customThenable(value: unknown) {
    const log = { called: 0, calledSynchronously: undefined as boolean | undefined, reads: 0 }
    const thenable = {}
    Object.defineProperty(thenable, "then", {
      get() {
        log.reads++
        let synchronous = true
        queueMicrotask(() => {
          synchronous = false
        })
        return (resolve: (value: unknown) => void) => {
          log.called++
          log.calledSynchronously = synchronous
          resolve(value)
        }
      },
    })
    return { log, thenable }
  }

  test("a custom thenable's then getter is read exactly once and called in a later microtask", async () => {
    const { log, thenable } = customThenable("resolved")
    expect(await run(thenable)).toBe("resolved")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable inside an array is read once and called later", async () => {
    const { log, thenable } = customThenable(["x", 1])
    expect(await run(["<", thenable, ">"])).toBe("<x1>")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable returned by a sync component is read once and called later", async () => {
    const { log, thenable } = customThenable("via component")
    function ReturnsThenable() {
      return thenable
    }
    expect(await run(<ReturnsThenable />)).toBe("via component")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable resolving to a node evaluates the node", async () => {
    const component = vi.fn(() => "node text")
    const Component = component as unknown as () => string
    const { log, thenable } = customThenable(<Component />)
    expect(await run(["[", thenable, "]"])).toBe("[node text]")
    expect(component).toHaveBeenCalledTimes(1)
    expect(log.reads).toBe(1)
  })

  test("a thenable resolving to another thenable is followed", async () => {
    const inner = customThenable("inner")
    const outer = customThenable(inner.thenable)
    expect(await run(outer.thenable)).toBe("inner")
    expect(outer.log.reads).toBe(1)
    expect(inner.log.reads).toBe(1)
  })

  test("a class instance with a prototype then method is a thenable", async () => {
    class Deferred {
      then(resolve: (value: unknown) => void) {
        resolve(["class ", "thenable"])
      }
    }
    expect(await run(new Deferred())).toBe("class thenable")
  })

  test("only the first settlement of a custom thenable counts", async () => {
    const thenable = {
      then(resolve: (value: unknown) => void, reject: (error: unknown) => void) {
        resolve("first")
        resolve("second")
        reject(new Error("ignored"))
      },
    }
    expect(await run(thenable)).toBe("first")
  })

  test("a thenable rejection propagates its reason by identity", async () => {
    const reason = new Error("thenable failed")
    const thenable = {
      then(_resolve: unknown, reject: (error: unknown) => void) {
        reject(reason)
      },
    }
    expect(await rejection(run(["a", thenable]))).toBe(reason)
  })

  test("a then method that throws rejects with that error", async () => {
    const thrown = new Error("then threw")
    const thenable = {
      then() {
        throw thrown
      },
    }
    expect(await rejection(run(thenable))).toBe(thrown)
  })

  test("a throwing then getter rejects with that error", async () => {
    const thrown = new Error("getter threw")
    const thenable = Object.defineProperty({}, "then", {
      get() {
        throw thrown
      },
    })
    expect(await rejection(run(["a", thenable]))).toBe(thrown)
  })

  test("an object whose then is not a function is not a thenable", async () => {
    await expectEvaluationError(run({ then: 42 }), "AML cannot render a value of type object")
    await expectEvaluationError(run({ then: "x" }), "AML cannot render a value of type object")
  })

  test("a component returning an object with a non-callable then getter reads it once", async () => {
    let reads = 0
    function Weird() {
      return Object.defineProperty({}, "then", {
        get() {
          reads++
          return "not callable"
        },
      })
    }
    await expectEvaluationError(run(<Weird />), "AML cannot render a value of type object")
    expect(reads).toBe(1)
  })
})
