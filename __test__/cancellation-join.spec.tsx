// Cancellation outcomes (INVENTORY LIM-1, LIM-2, RT-2): an abort never lets a provider's late
// answer resolve the run, components are joined rather than raced, and the grace timer for
// providers that ignore the abort dies with the evaluation.
import { afterEach, describe, expect, it, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { deferred, until } from "./support/async.js"
import { expectExact, rejection } from "./support/errors.js"

/** A provider whose calls never look at `context.signal`: each waits for its own gate. */
function ignoring(name = "p") {
  const started: string[] = []
  const gates = new Map<string, ReturnType<typeof deferred>>()
  const gate = (prompt: string) => {
    if (!gates.has(prompt)) gates.set(prompt, deferred())
    return gates.get(prompt)!
  }
  const provider = {
    name,
    async run(request: any) {
      started.push(request.prompt)
      await gate(request.prompt).promise
      return { text: `[${request.prompt}]` }
    },
  }
  return { provider, release: (prompt: string) => gate(prompt).resolve(), started }
}

/** A provider that rejects with the signal's reason as soon as it aborts. */
function cooperative(name = "p") {
  const started: string[] = []
  const provider = {
    name,
    run(request: any, context: any) {
      started.push(request.prompt)
      const signal: AbortSignal = context.signal
      return new Promise((_resolve, reject) => {
        if (signal.aborted) reject(signal.reason)
        signal.addEventListener("abort", () => reject(signal.reason), { once: true })
      })
    },
  }
  return { provider, started }
}

function finishes(runtime: AmlRuntime) {
  const events: any[] = []
  runtime.on("finish", (event: any) => {
    events.push(event)
  })
  return events
}

describe("a provider that ignores the abort (§2.1)", () => {
  it("rejects with the caller's reason once the provider answers, and finish reports it", async () => {
    const p = ignoring()
    const runtime = new AmlRuntime({ agentProvider: p.provider })
    const finished = finishes(runtime)
    const controller = new AbortController()
    const reason = new Error("caller cancelled")
    let settled = false
    const run = runtime.evaluate(<Agent>late</Agent>, { signal: controller.signal })
    run.then(
      () => (settled = true),
      () => (settled = true),
    )
    await until(() => p.started.length === 1, "the provider call")
    controller.abort(reason)
    await new Promise((resolve) => setImmediate(resolve))
    // The provider owns the signal: AML waits for it to settle before rejecting.
    expect(settled).toBe(false)
    p.release("late")
    expect(await rejection(run)).toBe(reason)
    expect(finished).toHaveLength(1)
    expect(finished[0].status).toBe("error")
    expect(finished[0].error).toBe(reason)
  })

  it("inside a component the late answer does not resolve the nested evaluation either", async () => {
    const p = ignoring()
    const runtime = new AmlRuntime({ agentProvider: p.provider })
    const controller = new AbortController()
    const reason = new Error("stop")
    const outcomes: unknown[] = []
    async function Caller() {
      try {
        outcomes.push(await evaluate(<Agent>inner</Agent>))
      } catch (error) {
        outcomes.push(error)
      }
      return "after"
    }
    const run = runtime.evaluate(<Caller />, { signal: controller.signal })
    await until(() => p.started.length === 1, "the provider call")
    controller.abort(reason)
    p.release("inner")
    expect(await rejection(run)).toBe(reason)
    expect(outcomes).toEqual([reason])
  })
})

describe("an aborted component is joined, not raced (§2.2)", () => {
  it("Promise.all over a running and a queued Agent rejects with both Agent errors", async () => {
    const p = cooperative("writer")
    const runtime = new AmlRuntime({ agentProvider: p.provider, maxConcurrentAgents: 1 })
    const finished = finishes(runtime)
    const controller = new AbortController()
    const reason = new Error("caller gave up")
    async function Both() {
      const [a, b] = await Promise.all([evaluate(<Agent>first</Agent>), evaluate(<Agent>second</Agent>)])
      return a + b
    }
    const run = runtime.evaluate(<Both />, { signal: controller.signal })
    await until(() => p.started.length === 1, "the running call")
    controller.abort(reason)
    const error = await rejection(run)
    expectExact(error, AggregateError, "AML component and concurrent nested evaluations failed")
    expect(error.errors).toHaveLength(2)
    const [running, queued] = error.errors
    expectExact(running, EvaluationError, 'Agent "writer" (span-1) failed')
    expect(running.cause).toBe(reason)
    expectExact(queued, EvaluationError, 'Agent "writer" (span-2) was cancelled before provider execution')
    expect(queued.cause).toBe(reason)
    expect(p.started).toEqual(["first"])
    expect(finished).toHaveLength(1)
    expect(finished[0].error).toBe(error)
  })

  it("three Agents: the errors follow the order the nested evaluations started", async () => {
    const p = cooperative()
    const runtime = new AmlRuntime({ agentProvider: p.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    const reason = { why: "plain object reason" }
    async function Fan() {
      return (await Promise.all([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>), evaluate(<Agent>c</Agent>)])).join("")
    }
    const run = runtime.evaluate(<Fan />, { signal: controller.signal })
    await until(() => p.started.length === 1, "the running call")
    controller.abort(reason)
    const error = await rejection(run)
    expectExact(error, AggregateError, "AML component and concurrent nested evaluations failed")
    expect(error.errors.map((e: Error) => e.message)).toEqual([
      'Agent "p" (span-1) failed',
      'Agent "p" (span-2) was cancelled before provider execution',
      'Agent "p" (span-3) was cancelled before provider execution',
    ])
    for (const nested of error.errors) expect(nested.cause).toBe(reason)
    expect(p.started).toEqual(["a"])
  })

  it("a component that catches the Agent errors and returns still rejects with the reason alone", async () => {
    const p = cooperative()
    const runtime = new AmlRuntime({ agentProvider: p.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    const reason = new Error("stop")
    const settled: PromiseSettledResult<string>[] = []
    async function Fan() {
      settled.push(...(await Promise.allSettled([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])))
      return "done"
    }
    const run = runtime.evaluate(<Fan />, { signal: controller.signal })
    await until(() => p.started.length === 1, "the running call")
    controller.abort(reason)
    expect(await rejection(run)).toBe(reason)
    expect(settled.map((s) => (s as PromiseRejectedResult).reason.message)).toEqual([
      'Agent "p" (span-1) failed',
      'Agent "p" (span-2) was cancelled before provider execution',
    ])
  })

  it("a component that never settles is abandoned with the reason once its nested work stopped", async () => {
    const runtime = new AmlRuntime()
    const controller = new AbortController()
    const reason = new Error("stop")
    const entered = deferred()
    async function Hang() {
      entered.resolve()
      await new Promise(() => {})
      return "unreachable"
    }
    const run = runtime.evaluate(<Hang />, { signal: controller.signal })
    await entered.promise
    controller.abort(reason)
    expect(await rejection(run)).toBe(reason)
  })
})

describe("an aborted run with fanned-out Agents still in flight", () => {
  it("finishes only after every one-call Agent of an abandoned component has settled", async () => {
    const p = ignoring()
    const runtime = new AmlRuntime({ agentProvider: p.provider })
    const finished = finishes(runtime)
    const controller = new AbortController()
    const reason = new Error("stop the fan-out")
    function FanOut() {
      return Promise.all(["a", "b", "c"].map((prompt) => evaluate(<Agent>{prompt}</Agent>)))
    }
    let settled = false
    const run = runtime.evaluate(<FanOut />, { signal: controller.signal })
    run.then(
      () => (settled = true),
      () => (settled = true),
    )
    await until(() => p.started.length === 3, "the three provider calls")
    controller.abort(reason)
    // The component is abandoned after one macrotask; the run must still wait for its Agents.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(false)
    expect(finished).toHaveLength(0)
    p.release("a")
    p.release("b")
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
    expect(finished).toHaveLength(0)
    p.release("c")
    expect(await rejection(run)).toBe(reason)
    expect(finished).toHaveLength(1)
  })
})

describe("the provider abort grace timer", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("is cleared when the aborted evaluation settles", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    const p = cooperative()
    const runtime = new AmlRuntime({ agentProvider: p.provider })
    const controller = new AbortController()
    const reason = new Error("stop")
    const run = runtime.evaluate(<Agent>x</Agent>, { signal: controller.signal })
    for (let i = 0; i < 50 && p.started.length === 0; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(p.started).toEqual(["x"])
    controller.abort(reason)
    // The grace timer started: a provider call was pending at the abort.
    expect(vi.getTimerCount()).toBe(1)
    // The provider rejected with the reason: the root Agent's wrapper carries it.
    expect((await rejection(run)).cause).toBe(reason)
    expect(vi.getTimerCount()).toBe(0)
  })
})
