// <Agent> provider outcomes (INVENTORY AG-1, AG-4): validation of the response a provider returns,
// and how provider failures and aborts reject the evaluation.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { expectEvaluationError, recorder } from "./support/agent.js"
import { ONLY_ACTIVE, rejection } from "./support/errors.js"

describe("response validation", () => {
  const invalid: [string, unknown][] = [
    ["text 42", { text: 42 }],
    ["no text", {}],
    ["null", null],
    ["undefined", undefined],
    ["a string", "text"],
    ["text undefined", { text: undefined }],
    ["a String object", { text: new String("boxed") }],
  ]
  for (const [label, response] of invalid) {
    test(`${label} → Agent "p" (span-1) returned an invalid response`, async () => {
      const provider = { name: "p", run: async () => response }
      const error = await expectEvaluationError(
        new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
        'Agent "p" (span-1) returned an invalid response',
      )
      expect(error.cause).toBeUndefined()
    })
  }

  test("a throwing text getter becomes the cause; text is read exactly once", async () => {
    const boom = new Error("getter exploded")
    let reads = 0
    const provider = {
      name: "p",
      run: async () => ({
        get text() {
          reads++
          throw boom
        },
      }),
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) returned an invalid response',
    )
    expect(error.cause).toBe(boom)
    expect(reads).toBe(1)

    let okReads = 0
    const once = {
      name: "q",
      run: async () => ({
        get text() {
          okReads++
          return okReads === 1 ? "first read" : "second read"
        },
      }),
    }
    expect(await new AmlRuntime({ agentProvider: once }).evaluate(<Agent>x</Agent>)).toBe("first read")
    expect(okReads).toBe(1)
  })

  test("the response getter runs with component evaluation masked", async () => {
    const seen: unknown[] = []
    const provider = {
      name: "p",
      run: async () => ({
        get text() {
          try {
            evaluate("x")
            seen.push("available")
          } catch (error) {
            seen.push(error)
          }
          return "ok"
        },
      }),
    }
    async function Caller() {
      return await evaluate(<Agent provider={provider}>x</Agent>)
    }
    expect(await new AmlRuntime().evaluate(<Caller />)).toBe("ok")
    expect(seen[0]).toBeInstanceOf(EvaluationError)
    expect((seen[0] as Error).message).toBe(ONLY_ACTIVE)
  })

  test("an empty text is a valid response and contributes nothing", async () => {
    const provider = { name: "p", run: async () => ({ text: "" }) }
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<>a<Agent>x</Agent>b</>)).toBe("ab")
  })

  test("extra response members (structured) are ignored in text mode", async () => {
    const provider = { name: "p", run: async () => ({ structured: { a: 1 }, text: "t" }) }
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)).toBe("t")
  })

  test("the provider may return a thenable", async () => {
    const provider = {
      name: "p",
      run: () => ({ then: (resolve: (value: unknown) => void) => resolve({ text: "from thenable" }) }),
    }
    expect(await new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>)).toBe("from thenable")
  })
})

describe("provider failures", () => {
  test('a rejection wraps as Agent "p" (span-1) failed with the provider error as cause', async () => {
    const boom = new Error("provider exploded")
    const provider = {
      name: "p",
      async run() {
        throw boom
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(boom)
  })

  test("a synchronous throw and a non-Error rejection are wrapped the same way", async () => {
    const thrown = { code: 42 }
    const sync = {
      name: "sync",
      run() {
        throw thrown
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: sync as any }).evaluate(
        <>
          <Agent provider={{ name: "ok", run: async () => ({ text: "" }) }}>first</Agent>
          <Agent>x</Agent>
        </>,
      ),
      'Agent "sync" (span-2) failed',
    )
    expect(error.cause).toBe(thrown)
    const stringy = { name: "s", run: () => Promise.reject("just a string") }
    const second = await expectEvaluationError(
      new AmlRuntime({ agentProvider: stringy as any }).evaluate(<Agent>x</Agent>),
      'Agent "s" (span-1) failed',
    )
    expect(second.cause).toBe("just a string")
  })

  test("an EvaluationError thrown by the provider is still wrapped", async () => {
    const inner = new EvaluationError("inner")
    const provider = {
      name: "p",
      async run() {
        throw inner
      },
    }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(inner)
  })

  test("the provider rejecting with the caller's abort reason gets the Agent wrapper at the root too", async () => {
    const controller = new AbortController()
    const reason = new Error("caller stopped")
    const provider = {
      name: "p",
      run(_request: any, context: any) {
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason))
          setTimeout(() => controller.abort(reason), 1)
        })
      },
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>, { signal: controller.signal }),
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('Agent "p" (span-1) failed')
    expect(error.cause).toBe(reason)
  })

  test("a provider that ignores the signal still rejects the evaluation with the reason", async () => {
    const controller = new AbortController()
    const reason = { not: "an error" }
    let called = 0
    const provider = {
      name: "p",
      run() {
        called++
        setTimeout(() => controller.abort(reason), 1)
        return new Promise(() => {})
      },
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>, { signal: controller.signal }),
    )
    expect(error).toBe(reason)
    expect(called).toBe(1)
  })

  test("an abort while the Agent's children are resolving rejects with the reason; the provider is never called", async () => {
    const { calls, provider } = recorder()
    const controller = new AbortController()
    const reason = new Error("early stop")
    async function Slow() {
      setTimeout(() => controller.abort(reason), 1)
      await new Promise((resolve) => setTimeout(resolve, 20))
      return "late child"
    }
    const error = await rejection(
      new AmlRuntime({ agentProvider: provider }).evaluate(
        <Agent>
          <Slow />
        </Agent>,
        { signal: controller.signal },
      ),
    )
    expect(error).toBe(reason)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(calls).toEqual([])
  })

  test("a provider's own AbortError (not the caller's reason) is wrapped", async () => {
    const own = new DOMException("provider timeout", "AbortError")
    const provider = { name: "p", run: () => Promise.reject(own) }
    const error = await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider as any }).evaluate(<Agent>x</Agent>),
      'Agent "p" (span-1) failed',
    )
    expect(error.cause).toBe(own)
  })
})
