// The per-domain Agent scheduler (INVENTORY LIM-1, RT-1): FIFO in ready order, the
// maxConcurrentAgents bound, slots held only for the provider call, abort draining the
// queue, failure isolation, ordered Promise.all, and one scheduler per root evaluation.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"
import { rejection } from "./support/errors.js"

type Deferred = { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void }

function deferred(): Deferred {
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, reject, resolve }
}

/** Polls (macrotask by macrotask) until `condition` holds; fails after ~2 s. */
async function until(condition: () => boolean, what = "condition"): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return
    await sleep(5)
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Lets every pending microtask and a few macrotasks run. */
const settleAll = () => sleep(20)

/**
 * A provider whose calls block until released by prompt. Tracks start order, the number of
 * calls inside run() right now and the maximum ever observed.
 */
function gated(name = "p") {
  const started: string[] = []
  const gates = new Map<string, Deferred>()
  const state = { active: 0, max: 0 }
  const gate = (prompt: string) => {
    let entry = gates.get(prompt)
    if (entry === undefined) {
      entry = deferred()
      gates.set(prompt, entry)
    }
    return entry
  }
  const provider = {
    name,
    async run(request: any, context: any) {
      state.active++
      state.max = Math.max(state.max, state.active)
      started.push(request.prompt)
      try {
        await Promise.race([
          gate(request.prompt).promise,
          new Promise((_resolve, reject) => {
            const signal: AbortSignal = context.signal
            if (signal.aborted) reject(signal.reason)
            signal.addEventListener("abort", () => reject(signal.reason), { once: true })
          }),
        ])
      } finally {
        state.active--
      }
      if (request.prompt.startsWith("fail")) throw new Error(`provider failed on ${request.prompt}`)
      return { text: `[${request.prompt}]` }
    },
  }
  return {
    provider,
    release: (prompt: string) => gate(prompt).resolve(),
    releaseAll: (prompts: string[]) => prompts.forEach((p) => gate(p).resolve()),
    started,
    state,
  }
}

function Delay(props: { ms: number; children?: unknown }) {
  return sleep(props.ms).then(() => props.children as any)
}

describe("FIFO and the concurrency bound", () => {
  test("queued Agents start in ready order, not authored order", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    async function Fan() {
      const results = await Promise.all([
        evaluate(<Agent>X</Agent>),
        // Authored second, but becomes ready only after its child settles.
        evaluate(
          <Agent>
            <Delay ms={15}>A</Delay>
          </Agent>,
        ),
        evaluate(<Agent>B</Agent>),
        evaluate(<Agent>C</Agent>),
      ])
      return results.join(",")
    }
    const result = runtime.evaluate(<Fan />)
    await until(() => g.started.length === 1, "X to start")
    await sleep(40) // A is now ready and queued behind B and C
    expect(g.started).toEqual(["X"])
    g.releaseAll(["A", "B", "C"])
    g.release("X")
    expect(await result).toBe("[X],[A],[B],[C]")
    expect(g.started).toEqual(["X", "B", "C", "A"])
    expect(g.state.max).toBe(1)
  })

  test("maxConcurrentAgents bounds the provider calls in flight; each release admits the next", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 2 })
    const prompts = ["a", "b", "c", "d", "e"]
    async function Fan() {
      return (await Promise.all(prompts.map((p) => evaluate(<Agent>{p}</Agent>)))).join("")
    }
    const result = runtime.evaluate(<Fan />)
    await until(() => g.started.length === 2, "two calls")
    await settleAll()
    expect(g.started).toEqual(["a", "b"])
    expect(g.state.active).toBe(2)
    g.release("b")
    await until(() => g.started.length === 3, "third call")
    await settleAll()
    expect(g.started).toEqual(["a", "b", "c"])
    expect(g.state.active).toBe(2)
    g.releaseAll(prompts)
    expect(await result).toBe("[a][b][c][d][e]")
    expect(g.started).toEqual(prompts)
    expect(g.state.max).toBe(2)
  })

  test("the default bound is 4", async () => {
    const g = gated()
    const prompts = ["1", "2", "3", "4", "5", "6"]
    async function Fan() {
      return (await Promise.all(prompts.map((p) => evaluate(<Agent>{p}</Agent>)))).join("")
    }
    const result = new AmlRuntime({ agentProvider: g.provider }).evaluate(<Fan />)
    await until(() => g.started.length === 4, "four calls")
    await settleAll()
    expect(g.started).toHaveLength(4)
    g.releaseAll(prompts)
    expect(await result).toBe("[1][2][3][4][5][6]")
    expect(g.state.max).toBe(4)
  })

  test("maxConcurrentAgents 0 is unlimited", async () => {
    const g = gated()
    const prompts = Array.from({ length: 12 }, (_, i) => `p${i}`)
    async function Fan() {
      return (await Promise.all(prompts.map((p) => evaluate(<Agent>{p}</Agent>)))).length
    }
    const result = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 0 }).evaluate(<Fan />)
    await until(() => g.started.length === 12, "all twelve calls")
    expect(g.state.active).toBe(12)
    g.releaseAll(prompts)
    expect(await result).toBe("12")
  })

  test("sibling Agents in JSX stay sequential whatever the bound", async () => {
    const g = gated()
    const result = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 0 }).evaluate(
      <>
        <Agent>one</Agent>
        <Agent>two</Agent>
        <Agent>three</Agent>
      </>,
    )
    await until(() => g.started.length === 1, "first call")
    await settleAll()
    expect(g.started).toEqual(["one"])
    g.releaseAll(["one", "two", "three"])
    expect(await result).toBe("[one][two][three]")
    expect(g.state.max).toBe(1)
  })
})

describe("slots are held only for the provider call", () => {
  test("nested child Agents never deadlock with maxConcurrentAgents 1", async () => {
    const calls: string[] = []
    const provider = {
      name: "p",
      async run(request: any) {
        calls.push(request.prompt)
        await sleep(1)
        return { text: `(${request.prompt})` }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider, maxConcurrentAgents: 1 })
    const result = await runtime.evaluate(
      <Agent>
        a<Agent>
          b<Agent>c</Agent>
        </Agent>
        <Agent>d</Agent>
      </Agent>,
    )
    expect(result).toBe("(a(b(c))(d))")
    expect(calls).toEqual(["c", "b(c)", "d", "a(b(c))(d)"])
  })

  test("concurrent nested evaluations inside a parent Agent's children complete with one slot", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    async function Specialists() {
      const [x, y] = await Promise.all([
        evaluate(
          <Agent>
            x<Agent>x-inner</Agent>
          </Agent>,
        ),
        evaluate(<Agent>y</Agent>),
      ])
      return `${x}+${y}`
    }
    const result = runtime.evaluate(
      <Agent>
        synth:
        <Specialists />
      </Agent>,
    )
    g.releaseAll(["x-inner", "x[x-inner]", "y", "synth:[x[x-inner]]+[y]"])
    expect(await result).toBe("[synth:[x[x-inner]]+[y]]")
    expect(g.started).toEqual(["x-inner", "y", "x[x-inner]", "synth:[x[x-inner]]+[y]"])
    expect(g.state.max).toBe(1)
  })
})

describe("abort", () => {
  test("clears the queue: queued Agents reject with the cancellation wrapper, caller's reason as cause", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    const reason = new Error("caller gave up")
    const settled: PromiseSettledResult<string>[] = []
    async function Fan() {
      settled.push(
        ...(await Promise.allSettled([
          evaluate(<Agent>running</Agent>),
          evaluate(<Agent>queued-1</Agent>),
          evaluate(<Agent>queued-2</Agent>),
        ])),
      )
      return "fan done"
    }
    const result = runtime.evaluate(<Fan />, { signal: controller.signal })
    await until(() => g.started.length === 1, "the running call")
    controller.abort(reason)
    expect(await rejection(result)).toBe(reason)
    await until(() => settled.length === 3, "the nested evaluations to settle")
    // The running Agent's nested evaluation carries the Agent wrapper (issue 8 §2.2).
    const running = settled[0] as PromiseRejectedResult
    expect(running.reason).toBeInstanceOf(EvaluationError)
    expect(running.reason.message).toBe('Agent "p" (span-1) failed')
    expect(running.reason.cause).toBe(reason)
    for (const [index, span] of [
      [1, "span-2"],
      [2, "span-3"],
    ] as const) {
      const outcome = settled[index] as PromiseRejectedResult
      expect(outcome.status).toBe("rejected")
      expect(outcome.reason).toBeInstanceOf(EvaluationError)
      expect(outcome.reason.message).toBe(`Agent "p" (${span}) was cancelled before provider execution`)
      expect(outcome.reason.cause).toBe(reason)
    }
    await settleAll()
    expect(g.started).toEqual(["running"])
  })

  test("the default AbortError reason is the cause when abort() is called without one", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    const settled: PromiseSettledResult<string>[] = []
    async function Fan() {
      settled.push(...(await Promise.allSettled([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])))
      return ""
    }
    const result = runtime.evaluate(<Fan />, { signal: controller.signal })
    await until(() => g.started.length === 1, "the running call")
    controller.abort()
    const error = await rejection(result)
    expect(error).toBe(controller.signal.reason)
    expect(error.name).toBe("AbortError")
    await until(() => settled.length === 2, "settled")
    const queued = settled[1] as PromiseRejectedResult
    expect(queued.reason.message).toBe('Agent "p" (span-2) was cancelled before provider execution')
    expect(queued.reason.cause).toBe(controller.signal.reason)
  })

  test("an unguarded Promise.all over queued Agents leaves no unhandled rejection behind", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on("unhandledRejection", onUnhandled)
    try {
      async function Fan() {
        return (await Promise.all([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>), evaluate(<Agent>c</Agent>)])).join("")
      }
      const result = runtime.evaluate(<Fan />, { signal: controller.signal })
      await until(() => g.started.length === 1, "the running call")
      const reason = new Error("stop")
      controller.abort(reason)
      // Joined (issue 8 §2.2): the three Agent errors, each caused by the reason.
      const error = await rejection(result)
      expect(error).toBeInstanceOf(AggregateError)
      expect(error.message).toBe("AML component and concurrent nested evaluations failed")
      expect(error.errors.map((nested: any) => nested.cause)).toEqual([reason, reason, reason])
      await settleAll()
      expect(unhandled).toEqual([])
      expect(g.started).toEqual(["a"])
    } finally {
      process.off("unhandledRejection", onUnhandled)
    }
  })

  test("a later evaluation on the same runtime has a fresh, working scheduler", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const controller = new AbortController()
    async function Fan() {
      await Promise.allSettled([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])
      return ""
    }
    const aborted = runtime.evaluate(<Fan />, { signal: controller.signal })
    await until(() => g.started.length === 1, "the running call")
    controller.abort(new Error("stop"))
    await rejection(aborted)
    g.releaseAll(["c", "d"])
    async function Again() {
      return (await Promise.all([evaluate(<Agent>c</Agent>), evaluate(<Agent>d</Agent>)])).join("")
    }
    expect(await runtime.evaluate(<Again />)).toBe("[c][d]")
  })
})

describe("failure isolation and ordering", () => {
  test("one failing Agent does not abort its siblings and releases its slot", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    async function Fan() {
      const results = await Promise.allSettled([
        evaluate(<Agent>ok-1</Agent>),
        evaluate(<Agent>fail-2</Agent>),
        evaluate(<Agent>ok-3</Agent>),
      ])
      return results.map((r) => (r.status === "fulfilled" ? r.value : `error:${r.reason.message}`)).join("|")
    }
    g.releaseAll(["ok-1", "fail-2", "ok-3"])
    expect(await runtime.evaluate(<Fan />)).toBe('[ok-1]|error:Agent "p" (span-2) failed|[ok-3]')
    expect(g.started).toEqual(["ok-1", "fail-2", "ok-3"])
  })

  test("a failure while others are queued lets the queue continue", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const causes: unknown[] = []
    async function Fan() {
      const results = await Promise.allSettled([
        evaluate(<Agent>fail-first</Agent>),
        evaluate(<Agent>second</Agent>),
        evaluate(<Agent>third</Agent>),
      ])
      for (const r of results) if (r.status === "rejected") causes.push(r.reason.cause)
      return results.filter((r) => r.status === "fulfilled").length
    }
    const result = runtime.evaluate(<Fan />)
    await until(() => g.started.length === 1, "first call")
    await settleAll()
    expect(g.started).toEqual(["fail-first"])
    g.releaseAll(["fail-first", "second", "third"])
    expect(await result).toBe("2")
    expect((causes[0] as Error).message).toBe("provider failed on fail-first")
  })

  test("Promise.all of component-local evaluate() keeps authored order when the second finishes first", async () => {
    const finished: string[] = []
    const provider = {
      name: "p",
      async run(request: any) {
        await sleep(request.prompt === "slow" ? 30 : 1)
        finished.push(request.prompt)
        return { text: request.prompt.toUpperCase() }
      },
    }
    async function Review() {
      const [first, second] = await Promise.all([evaluate(<Agent>slow</Agent>), evaluate(<Agent>fast</Agent>)])
      return `${first}/${second}`
    }
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Review />)).toBe("SLOW/FAST")
    expect(finished).toEqual(["fast", "slow"])
  })
})

describe("one scheduler per root evaluation", () => {
  test("concurrent root evaluations of one runtime do not share a maxConcurrentAgents 1 slot", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    const first = runtime.evaluate(<Agent>first</Agent>)
    const second = runtime.evaluate(<Agent>second</Agent>)
    // Both calls are in flight at once: a shared scheduler would keep "second" queued.
    await until(() => g.started.length === 2, "both root evaluations to call the provider")
    expect(g.state.active).toBe(2)
    g.releaseAll(["first", "second"])
    expect(await Promise.all([first, second])).toEqual(["[first]", "[second]"])
  })

  test("component-local evaluations share their root's scheduler", async () => {
    const g = gated()
    const runtime = new AmlRuntime({ agentProvider: g.provider, maxConcurrentAgents: 1 })
    async function Fan() {
      return (await Promise.all([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])).join("")
    }
    const result = runtime.evaluate(
      <>
        <Fan />
      </>,
    )
    await until(() => g.started.length === 1, "one call")
    await settleAll()
    expect(g.started).toEqual(["a"])
    g.releaseAll(["a", "b"])
    expect(await result).toBe("[a][b]")
    expect(g.state.max).toBe(1)
  })

  test("an evaluation started from a provider of another runtime has its own scheduler", async () => {
    const innerRuntime = new AmlRuntime({
      agentProvider: { name: "inner", run: async (r: any) => ({ text: `inner(${r.prompt})` }) },
      maxConcurrentAgents: 1,
    })
    const outer = {
      name: "outer",
      async run(request: any) {
        // The outer call holds the outer domain's only slot; the inner domain is separate.
        return { text: await innerRuntime.evaluate(<Agent>{request.prompt}</Agent>) }
      },
    }
    expect(await new AmlRuntime({ agentProvider: outer, maxConcurrentAgents: 1 }).evaluate(<Agent>q</Agent>)).toBe(
      "inner(q)",
    )
  })
})
