// executeAgentProviderSession (INVENTORY PA-6) driven directly with a test context: session
// capture and validation, turn order, abort forwarding and ordering, error aggregation.
import { describe, expect, it } from "vitest"

import { createAgentProviderTurns, executeAgentProviderSession, type AgentRequest } from "@aml-jsx/sdk"
import { createAgentExecutionContext } from "@aml-jsx/sdk/testing"
import { expectExact, rejection } from "./support/errors.js"

const NAME = "sess"
const LABEL = `Agent provider "${NAME}"`

const turns = (...followUps: string[]) =>
  createAgentProviderTurns({ followUps, prompt: "p0" } as unknown as AgentRequest, NAME)

/** A session that logs every call; `overrides` replace individual members. */
function session(log: string[], overrides: Record<string, unknown> = {}) {
  return {
    async abort() {
      log.push("abort")
    },
    async close() {
      log.push("close")
    },
    async runTurn(turn: { prompt: string }) {
      log.push(`turn:${turn.prompt}`)
      return { text: `answer:${turn.prompt}` }
    },
    ...overrides,
  }
}

const run = (value: unknown, list = turns(), context = createAgentExecutionContext()) =>
  executeAgentProviderSession(value as never, list, context, NAME)

describe("session capture and validation", () => {
  it.each([[null], [undefined], ["session"], [42]])("rejects %j as an invalid session", async (value) => {
    expectExact(await rejection(run(value)), TypeError, `${LABEL} returned an invalid session`)
  })

  it("reports an unreadable close() with its cause and calls nothing", async () => {
    const cause = new Error("getter")
    const error = await rejection(
      run({
        get close() {
          throw cause
        },
      }),
    )
    expectExact(error, TypeError, `${LABEL} returned a session with unreadable close()`)
    expect(error.cause).toBe(cause)
  })

  it.each([[{}], [{ close: "close", runTurn: async () => ({ text: "" }) }]])(
    "rejects a session without a close() function",
    async (value) => {
      expectExact(await rejection(run(value)), TypeError, `${LABEL} returned a session without close()`)
    },
  )

  it("captures close first, then abort and runTurn, each once", async () => {
    const reads: string[] = []
    const log: string[] = []
    const target = session(log)
    const proxy = new Proxy(target, {
      get(object, key, receiver) {
        reads.push(String(key))
        return Reflect.get(object, key, receiver)
      },
    })
    await expect(run(proxy, turns("p1"))).resolves.toEqual({ text: "answer:p1" })
    expect(reads).toEqual(["close", "abort", "runTurn"])
  })

  it("closes the session when abort or runTurn cannot be read", async () => {
    const log: string[] = []
    const cause = new Error("getter")
    const value = {
      async close() {
        log.push("close")
      },
      get runTurn() {
        throw cause
      },
    }
    const error = await rejection(run(value))
    expectExact(error, TypeError, `${LABEL} returned an unreadable session`)
    expect(error.cause).toBe(cause)
    expect(log).toEqual(["close"])
  })

  it("closes the session when abort is not a function", async () => {
    const log: string[] = []
    const error = await rejection(run(session(log, { abort: "stop" })))
    expectExact(error, TypeError, `${LABEL} session abort must be a function when provided`)
    expect(log).toEqual(["close"])
  })

  it("closes the session when runTurn is missing", async () => {
    const log: string[] = []
    const error = await rejection(run(session(log, { runTurn: undefined })))
    expectExact(error, TypeError, `${LABEL} returned a session without runTurn()`)
    expect(log).toEqual(["close"])
  })

  it("aggregates a validation failure with a cleanup failure", async () => {
    const cleanup = new Error("close failed")
    const error = await rejection(
      run({
        close: async () => {
          throw cleanup
        },
      }),
    )
    expectExact(error, AggregateError, `${LABEL} session validation and cleanup failed`)
    expectExact(error.errors[0], TypeError, `${LABEL} returned a session without runTurn()`)
    expect(error.errors[1]).toBe(cleanup)
    expect(error.errors).toHaveLength(2)
  })
})

describe("turn execution", () => {
  it("runs every turn in order with the session as this and the context, then closes", async () => {
    const log: string[] = []
    const context = createAgentExecutionContext()
    const seen: unknown[] = []
    const value = session(log, {
      async runTurn(this: unknown, turn: { prompt: string }, ctx: unknown) {
        seen.push([this, ctx])
        log.push(`turn:${turn.prompt}`)
        return { text: `answer:${turn.prompt}` }
      },
    })
    const list = turns("p1", "p2")
    await expect(executeAgentProviderSession(value as never, list, context, NAME)).resolves.toEqual({
      text: "answer:p2",
    })
    expect(log).toEqual(["turn:p0", "turn:p1", "turn:p2", "close"])
    expect(seen).toEqual([
      [value, context],
      [value, context],
      [value, context],
    ])
  })

  it("returns the final response object itself", async () => {
    const final = { structured: { ok: true }, text: "done" }
    const value = session([], { runTurn: async () => final })
    await expect(run(value)).resolves.toBe(final)
  })

  it("stops at the failing turn, closes, and rethrows the same error", async () => {
    const log: string[] = []
    const failure = new Error("turn failed")
    const value = session(log, {
      async runTurn(turn: { index: number }) {
        log.push(`turn:${turn.index}`)
        if (turn.index === 1) throw failure
        return { text: "" }
      },
    })
    expect(await rejection(run(value, turns("p1", "p2")))).toBe(failure)
    expect(log).toEqual(["turn:0", "turn:1", "close"])
  })

  it("treats a synchronous runTurn or close throw like a rejection", async () => {
    const failure = new Error("sync")
    const log: string[] = []
    const value = session(log, {
      runTurn() {
        throw failure
      },
    })
    expect(await rejection(run(value))).toBe(failure)
    expect(log).toEqual(["close"])
  })

  it("rethrows a lone cleanup failure unwrapped", async () => {
    const cleanup = new Error("close failed")
    const value = session([], {
      close() {
        throw cleanup
      },
    })
    expect(await rejection(run(value))).toBe(cleanup)
  })

  it("aggregates an execution failure with a cleanup failure, execution first", async () => {
    const failure = new Error("turn failed")
    const cleanup = new Error("close failed")
    const value = session([], {
      close: async () => {
        throw cleanup
      },
      runTurn: async () => {
        throw failure
      },
    })
    const error = await rejection(run(value))
    expectExact(error, AggregateError, `${LABEL} session execution and cleanup failed`)
    expect(error.errors).toEqual([failure, cleanup])
  })

  it.each([
    ["no turns", []],
    ["an undefined final response", undefined],
  ])("fails with 'produced no response' for %s, after closing", async (_label, list) => {
    const log: string[] = []
    const value = session(log, { runTurn: async () => undefined })
    const error = await rejection(run(value, (list ?? turns()) as never))
    expectExact(error, Error, `${LABEL} session produced no response`)
    expect(log).toEqual(["close"])
  })
})
