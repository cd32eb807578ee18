// A started provider that rejects because of the caller's abort fails its Agent with the
// wrapper `Agent "<name>" (<span>) failed` whose cause is that rejection — at the root as in
// a component-local evaluate() (INVENTORY LIM-1, LIM-2) — and the session's lifecycle is
// traced in order: cancellation reaches the session, the turn fails, cleanup succeeds.
import { describe, expect, it } from "vitest"

import { AbstractAgentProvider, Agent, AmlRuntime, EvaluationError } from "@aml-jsx/sdk"

class WaitsForAbort extends AbstractAgentProvider<"waits-for-abort"> {
  started: Promise<void>
  private markStarted!: () => void
  closed = 0

  constructor() {
    super("waits-for-abort")
    this.started = new Promise((resolve) => (this.markStarted = resolve))
  }

  protected async openSession() {
    const owner = this
    return {
      async abort() {},
      async close() {
        owner.closed++
      },
      runTurn(_turn: unknown, context: { signal: AbortSignal }) {
        owner.markStarted()
        return new Promise<never>((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true })
        })
      },
    }
  }
}

describe("a started provider rejecting with the abort reason", () => {
  it("fails the root Agent with its wrapper, the reason as cause", async () => {
    const events: any[] = []
    const provider = new WaitsForAbort()
    const controller = new AbortController()
    const pending = new AmlRuntime({ trace: (event) => events.push(event) }).evaluate(<Agent provider={provider}>go</Agent>, {
      signal: controller.signal,
    })
    await provider.started
    const reason = new Error("caller gave up")
    controller.abort(reason)

    const error = await pending.then(
      () => undefined,
      (cause: any) => cause,
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('Agent "waits-for-abort" (span-1) failed')
    expect(error.cause).toBe(reason)
    expect(provider.closed).toBe(1)

    const at = (predicate: (event: any) => boolean) => events.findIndex(predicate)
    const requested = at((e) => e.type === "event" && e.name === "agent.session" && e.attributes.state === "cancellation_requested")
    const turnEnd = at((e) => e.type === "span.end" && e.name === "agent.turn")
    const cleanupEnd = at((e) => e.type === "span.end" && e.name === "agent.cleanup")
    expect(requested).toBeGreaterThanOrEqual(0)
    expect(events[turnEnd].status).toBe("error")
    expect(events[cleanupEnd].status).toBe("ok")
    expect(requested).toBeLessThan(turnEnd)
    expect(turnEnd).toBeLessThan(cleanupEnd)
  })

  it("gives the same wrapper inside a component-local evaluate()", async () => {
    const provider = new WaitsForAbort()
    const controller = new AbortController()
    const { evaluate } = await import("@aml-jsx/sdk")
    async function Workflow() {
      return await evaluate(<Agent provider={provider}>nested</Agent>)
    }
    const pending = new AmlRuntime().evaluate(<Workflow />, { signal: controller.signal })
    await provider.started
    const reason = new Error("stop nested")
    controller.abort(reason)
    const error = await pending.then(
      () => undefined,
      (cause: any) => cause,
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toMatch(/^Agent "waits-for-abort" \(span-\d+\) failed$/)
    expect(error.cause).toBe(reason)
  })
})
