// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — error identity and EvaluationError.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { rejection } from "./support/errors.js"
import { AsyncPass, Level, Pass, run } from "./support/evaluator.js"

describe("errors", () => {
  test("EvaluationError is an Error subclass named EvaluationError that keeps cause", () => {
    const cause = new Error("root cause")
    const error = new EvaluationError("message", { cause })
    expect(error).toBeInstanceOf(Error)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.name).toBe("EvaluationError")
    expect(error.message).toBe("message")
    expect(error.cause).toBe(cause)
    expect(new EvaluationError("no cause")).not.toHaveProperty("cause")
  })

  test("a sync component's error propagates by identity", async () => {
    const thrown = new Error("component failed")
    function Fails() {
      throw thrown
    }
    const error = await rejection(run(["a", <Pass>{<Fails />}</Pass>]))
    expect(error).toBe(thrown)
    expect(error).not.toBeInstanceOf(EvaluationError)
  })

  test("an async component's rejection propagates by identity with its cause", async () => {
    const cause = new Error("inner")
    const thrown = new TypeError("async failed", { cause })
    async function Fails() {
      await sleep(1)
      throw thrown
    }
    const error = await rejection(run(<AsyncPass>{<Fails />}</AsyncPass>))
    expect(error).toBe(thrown)
    expect((error as Error).cause).toBe(cause)
  })

  test("non-Error thrown values propagate as is", async () => {
    const thrown = { code: 7 }
    function ThrowsObject() {
      throw thrown
    }
    function ThrowsString() {
      throw "plain string"
    }
    expect(await rejection(run(<ThrowsObject />))).toBe(thrown)
    expect(await rejection(run(<ThrowsString />))).toBe("plain string")
  })

  test("a rejected promise value propagates its reason by identity", async () => {
    const reason = new RangeError("promise failed")
    expect(await rejection(run(["a", Promise.reject(reason)]))).toBe(reason)
  })

  test("a failure stops evaluation: later siblings are never read or invoked", async () => {
    const later = vi.fn(() => "later")
    const Later = later as unknown as () => string
    function Fails() {
      throw new Error("stop")
    }
    await expect(run([<Fails />, <Later />])).rejects.toThrow("stop")
    expect(later).not.toHaveBeenCalled()
  })

  test("an error from a nested evaluate() propagates by identity through the component", async () => {
    const thrown = new Error("nested failed")
    function Fails() {
      throw thrown
    }
    async function Outer() {
      return await evaluate(<Fails />)
    }
    expect(await rejection(run(<Outer />))).toBe(thrown)
  })

  test("evaluate() outside a component throws EvaluationError synchronously", () => {
    let caught: unknown
    try {
      evaluate("x")
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(EvaluationError)
    expect((caught as Error).message).toBe("evaluate() is only available while an AML component is active")
  })

  test("a runtime can evaluate again after a failed evaluation", async () => {
    const runtime = new AmlRuntime()
    const cyclic: unknown[] = []
    cyclic.push(cyclic)
    await expect(runtime.evaluate(cyclic as never)).rejects.toThrow("AML arrays cannot contain cycles")
    expect(await runtime.evaluate(<Level n={3} />)).toBe("leaf")
  })
})
