// Cancellation inside executeAgentProviderSession (INVENTORY PA-6): abort() is requested
// once, awaited before close(), checked before and after each turn, and the cancellation
// reason replaces the turn's own error; abort and cleanup failures aggregate after it.
import { describe, expect, it } from "vitest"

import {
  Agent,
  AmlRuntime,
  createAgentProviderTurns,
  defineAgentProvider,
  evaluate,
  executeAgentProviderSession,
  type AgentRequest,
} from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"
import { createAgentExecutionContext } from "@aml-jsx/sdk/testing"
import { rejection } from "./support/errors.js"

const NAME = "abortable"
const LABEL = `Agent provider "${NAME}"`

function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, reject, resolve }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

const turns = (...followUps: string[]) =>
  createAgentProviderTurns({ followUps, prompt: "p0" } as unknown as AgentRequest, NAME)

/** A session whose first turn blocks on `gate`; everything is logged. */
function blockingSession(log: string[], gate: Promise<unknown>, overrides: Record<string, unknown> = {}) {
  return {
    abort: async () => {
      log.push("abort")
    },
    close: async () => {
      log.push("close")
    },
    async runTurn(turn: { index: number }) {
      log.push(`turn:${turn.index}`)
      if (turn.index === 0) await gate
      log.push(`turn-end:${turn.index}`)
      return { text: `t${turn.index}` }
    },
    ...overrides,
  }
}

function start(value: unknown, list = turns("p1")) {
  const controller = new AbortController()
  const context = createAgentExecutionContext({ signal: controller.signal })
  const promise = executeAgentProviderSession(value as never, list, context, NAME)
  promise.catch(() => {})
  return { controller, promise }
}

describe("abort forwarding", () => {
  it("calls abort() once, replaces the turn error with the reason, and skips later turns", async () => {
    const log: string[] = []
    const gate = deferred()
    const { controller, promise } = start(blockingSession(log, gate.promise))
    await tick()
    const reason = new Error("stop")
    controller.abort(reason)
    expect(log).toEqual(["turn:0", "abort"])
    gate.reject(new Error("interrupted by abort"))
    expect(await rejection(promise)).toBe(reason)
    expect(log).toEqual(["turn:0", "abort", "close"])
  })

  it("discards a response that arrives after the abort (check after each turn)", async () => {
    const log: string[] = []
    const gate = deferred()
    const { controller, promise } = start(blockingSession(log, gate.promise))
    await tick()
    const reason = new Error("stop")
    controller.abort(reason)
    gate.resolve()
    expect(await rejection(promise)).toBe(reason)
    expect(log).toEqual(["turn:0", "abort", "turn-end:0", "close"])
  })

  it("awaits the pending abort() before close()", async () => {
    const log: string[] = []
    const gate = deferred()
    const aborted = deferred()
    const value = blockingSession(log, gate.promise, {
      abort: async () => {
        log.push("abort:start")
        await aborted.promise
        log.push("abort:end")
      },
    })
    const { controller, promise } = start(value)
    await tick()
    controller.abort(new Error("stop"))
    gate.resolve()
    await tick()
    expect(log).toEqual(["turn:0", "abort:start", "turn-end:0"])
    aborted.resolve()
    await rejection(promise)
    expect(log).toEqual(["turn:0", "abort:start", "turn-end:0", "abort:end", "close"])
  })

  it("forwards a cancellation that happened before the first turn, then runs no turn", async () => {
    const log: string[] = []
    const controller = new AbortController()
    const reason = new Error("early")
    controller.abort(reason)
    const context = createAgentExecutionContext({ signal: controller.signal })
    const value = blockingSession(log, Promise.resolve())
    expect(await rejection(executeAgentProviderSession(value as never, turns(), context, NAME))).toBe(reason)
    expect(log).toEqual(["abort", "close"])
  })

  it("works without an abort() member", async () => {
    const log: string[] = []
    const gate = deferred()
    const { controller, promise } = start(blockingSession(log, gate.promise, { abort: undefined }))
    await tick()
    const reason = new Error("stop")
    controller.abort(reason)
    gate.resolve()
    expect(await rejection(promise)).toBe(reason)
    expect(log).toEqual(["turn:0", "turn-end:0", "close"])
  })

  it("does not call abort() for a cancellation after the session settled", async () => {
    const log: string[] = []
    const { controller, promise } = start(blockingSession(log, Promise.resolve()))
    await expect(promise).resolves.toEqual({ text: "t1" })
    controller.abort(new Error("late"))
    expect(log).toEqual(["turn:0", "turn-end:0", "turn:1", "turn-end:1", "close"])
  })
})

describe("abort() runs masked", () => {
  it("hides a component's evaluate() from abort() even when that component aborted", async () => {
    const controller = new AbortController()
    const reason = new Error("component cancelled")
    const started = deferred()
    let seen = "abort() not called"
    const session = {
      abort: async () => {
        try {
          void evaluate("probe").catch(() => {})
          seen = "evaluate() was available"
        } catch (error: any) {
          seen = error.message
        }
      },
      close: async () => {},
      runTurn: () => {
        started.resolve()
        return new Promise<never>((_, reject) => controller.signal.addEventListener("abort", () => reject(new Error("x"))))
      },
    }
    const agentProvider = defineAgentProvider({
      name: NAME,
      run: (request, context) => executeAgentProviderSession(session, turns(), context, NAME),
    })
    async function Canceller() {
      void evaluate(jsx(Agent, { children: "x" })).catch(() => {})
      await started.promise
      controller.abort(reason) // abort listeners run synchronously, inside this component
      return ""
    }
    const runtime = new AmlRuntime({ agentProvider })
    // The joined nested evaluation carries the Agent wrapper, caused by the reason (issue 8 §2.2).
    const error = await rejection(runtime.evaluate(jsx(Canceller, {}), { signal: controller.signal }))
    expect(error.message).toBe(`Agent "${NAME}" (span-1) failed`)
    expect(error.cause).toBe(reason)
    expect(seen).toBe("evaluate() is only available while an AML component is active")
  })
})

describe("error order", () => {
  it("aggregates the reason with an abort() failure", async () => {
    const gate = deferred()
    const abortFailure = new Error("abort failed")
    const value = blockingSession([], gate.promise, {
      abort: async () => {
        throw abortFailure
      },
    })
    const { controller, promise } = start(value)
    await tick()
    const reason = new Error("stop")
    controller.abort(reason)
    gate.resolve()
    const error = await rejection(promise)
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe(`${LABEL} session execution and cleanup failed`)
    expect(error.errors).toEqual([reason, abortFailure])
  })

  it("orders execution, abort, then cleanup errors; a synchronous abort throw counts", async () => {
    const gate = deferred()
    const abortFailure = new Error("abort failed")
    const cleanup = new Error("close failed")
    const value = blockingSession([], gate.promise, {
      abort() {
        throw abortFailure
      },
      close: async () => {
        throw cleanup
      },
    })
    const { controller, promise } = start(value)
    await tick()
    const reason = new Error("stop")
    controller.abort(reason)
    gate.reject(new Error("turn error hidden by the reason"))
    const error = await rejection(promise)
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe(`${LABEL} session execution and cleanup failed`)
    expect(error.errors).toEqual([reason, abortFailure, cleanup])
  })
})
