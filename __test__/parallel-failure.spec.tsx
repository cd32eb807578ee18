// <Parallel> failure and cancellation (INVENTORY PAR-1, LIM-1, LIM-2). The pages say a
// Parallel "waits for every branch and its cleanup"; the aggregation rule and message are
// this package's choice (lib/core/parallel.js, docs/PARALLEL.md).
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Parallel } from "@aml-jsx/sdk"

import { delay, traceRecorder, until } from "./support/async.js"
import { failureOf } from "./support/schemas.js"

describe("failure", () => {
  it("one failed branch is rethrown as is, after the other branches settled", async () => {
    const boom = new Error("boom")
    const log: string[] = []
    async function Fails() {
      await delay(1)
      log.push("failed")
      throw boom
    }
    async function Slow() {
      await delay(40)
      log.push("slow settled")
      return "slow"
    }
    function After() {
      log.push("after")
      return "never"
    }
    const error = await failureOf(() =>
      new AmlRuntime().evaluate([
        <Parallel>
          <Fails />
          <Slow />
        </Parallel>,
        <After />,
      ]),
    )
    expect(error).toBe(boom)
    expect(log).toEqual(["failed", "slow settled"])
  })

  it("several failures give AggregateError 'AML Parallel branches failed' in authored order", async () => {
    const first = new Error("first")
    const second = new TypeError("second")
    async function Late() {
      await delay(30)
      throw first
    }
    async function Early() {
      await delay(1)
      throw second
    }
    const provider = {
      name: "p",
      async run() {
        throw new Error("provider down")
      },
    }
    const { events, sink } = traceRecorder()
    const error = await failureOf(() =>
      new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate(
        <Parallel>
          <Late />
          ok
          <Early />
          <Agent>x</Agent>
        </Parallel>,
      ),
    )
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML Parallel branches failed")
    expect(error.errors.slice(0, 2)).toEqual([first, second])
    expect(error.errors[0]).toBe(first)
    expect(error.errors[1]).toBe(second)
    // A failed Agent is wrapped as usual before it becomes a branch error.
    expect(error.errors[2]).toBeInstanceOf(EvaluationError)
    expect(error.errors[2].message).toMatch(/^Agent "p" \(span-\d+\) failed$/)
    expect(error.errors[2].cause.message).toBe("provider down")
    expect(error.errors).toHaveLength(3)
    const end = events.find((event) => event.type === "span.end" && event.kind === "parallel")
    expect(end.status).toBe("error")
    expect(end.attributes["error.type"]).toBe("AggregateError")
  })

  it("sibling branches are not aborted by a failure", async () => {
    const seen: boolean[] = []
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        await delay(20)
        seen.push(context.signal.aborted)
        return { text: request.prompt }
      },
    }
    async function Fails() {
      throw new Error("fast failure")
    }
    const tree = (
      <Parallel>
        <Fails />
        <Agent>a</Agent>
      </Parallel>
    )
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(tree))
    expect(error.message).toBe("fast failure")
    expect(seen).toEqual([false])
  })
})

describe("shared budgets", () => {
  it("branches draw on the evaluation's maxAgentCalls: the branch over budget fails alone", async () => {
    const provider = { name: "p", async run(request: any) { return { text: request.prompt } } }
    const error = await failureOf(() =>
      new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 }).evaluate(
        <Parallel>
          <Agent>a</Agent>
          <Agent>b</Agent>
          <Agent>c</Agent>
        </Parallel>,
      ),
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toMatch(/^AML evaluation exceeded maxAgentCalls 2 at Agent span-\d+$/)
  })
})

/** A provider that waits until its signal aborts, then records what it saw and rejects. */
function abortAware() {
  const started: string[] = []
  const seen: { prompt: string; aborted: boolean }[] = []
  const provider = {
    name: "p",
    run(request: any, context: any) {
      started.push(request.prompt)
      const signal: AbortSignal = context.signal
      return new Promise<never>((_resolve, reject) => {
        const stop = () => {
          seen.push({ aborted: signal.aborted, prompt: request.prompt })
          reject(signal.reason)
        }
        if (signal.aborted) stop()
        else signal.addEventListener("abort", stop, { once: true })
      })
    },
  }
  return { provider, seen, started }
}

describe("cancellation", () => {
  it("an abort during Parallel leaves no branch running and rejects with the reason", async () => {
    const { provider, seen, started } = abortAware()
    const controller = new AbortController()
    const reason = { reason: "user stopped" }
    const components: { name: string; afterAbort: boolean }[] = []
    const startedAfterAbort: string[] = []
    const tracked = {
      name: "p",
      run(request: any, context: any) {
        if (controller.signal.aborted) startedAfterAbort.push(request.prompt)
        return provider.run(request, context)
      },
    }
    const mark = (name: string) => components.push({ afterAbort: controller.signal.aborted, name })
    async function Later() {
      mark("Later")
      await delay(60)
      // The component's own continuation is ordinary JavaScript AML cannot preempt; what
      // must not happen is AML evaluating what it returns (the Agent below never starts).
      return <Agent>later</Agent>
    }
    function Next() {
      mark("Next")
      return "next"
    }
    function Wrapped() {
      mark("Wrapped")
      return <Agent>b</Agent>
    }
    const tree = (
      <Parallel>
        <Agent>a</Agent>
        <Wrapped />
        {/* Queued behind maxConcurrentAgents 2: cancelled before provider execution. */}
        <Agent>queued</Agent>
        <Later />
        {[<Later />, <Next />]}
      </Parallel>
    )
    const runtime = new AmlRuntime({ agentProvider: tracked, maxConcurrentAgents: 2 })
    const evaluation = runtime.evaluate(tree, { signal: controller.signal })
    await until(() => started.length === 2, "two provider calls")
    controller.abort(reason)
    const error = await failureOf(() => evaluation)
    expect(error).toBe(reason)
    // Every provider call that started saw its signal aborted, and no call started after.
    expect(started).toEqual(["a", "b"])
    expect(seen).toEqual([
      { aborted: true, prompt: "a" },
      { aborted: true, prompt: "b" },
    ])
    // No component is invoked and no provider called later, even once the timers the
    // components were awaiting have fired.
    await delay(120)
    expect(startedAfterAbort).toEqual([])
    expect(components.filter((entry) => entry.afterAbort)).toEqual([])
    expect(components.map((entry) => entry.name).sort()).toEqual(["Later", "Later", "Wrapped"])
  })

  it("with every branch inside a provider call, the reason (not an aggregate) is what evaluate rejects with", async () => {
    const { provider, started } = abortAware()
    const controller = new AbortController()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const evaluation = runtime.evaluate(
      <Parallel>
        <Agent>a</Agent>
        <Agent>b</Agent>
        <Agent>c</Agent>
      </Parallel>,
      { signal: controller.signal },
    )
    await until(() => started.length === 3, "three provider calls")
    const reason = new Error("deadline")
    controller.abort(reason)
    expect(await failureOf(() => evaluation)).toBe(reason)
  })

  it("a branch that failed on its own before the abort keeps its error", async () => {
    const { provider, started } = abortAware()
    const controller = new AbortController()
    const own = new Error("own failure")
    async function Fails() {
      throw own
    }
    const evaluation = new AmlRuntime({ agentProvider: provider }).evaluate(
      <Parallel>
        <Fails />
        <Agent>a</Agent>
      </Parallel>,
      { signal: controller.signal },
    )
    await until(() => started.length === 1, "the provider call")
    controller.abort(new Error("late abort"))
    expect(await failureOf(() => evaluation)).toBe(own)
  })
})
