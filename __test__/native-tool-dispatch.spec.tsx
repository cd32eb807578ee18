// JS Tools called from tokio (src/tools/dispatch.rs, lib/tools/native-dispatch.js) through the
// test-only Rust-native provider `nativeScriptedProvider()`: the same validation pipeline,
// spans and cancellation as a JS provider, failures as data, a throwing callback that cannot
// kill the process, concurrency. That Node still exits by itself: native-tool-dispatch-exit.spec.ts.
import { getEventListeners } from "node:events"

import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Tool, defineTool } from "@aml-jsx/sdk"
import { nativeScriptedProvider } from "@aml-jsx/sdk/testing"

import { cancellationCancel, cancellationCreate, cancellationRelease, liveCancellations, nativeScriptRun, toolDispatcherInstall } from "../lib/core/native.js"
import { dispatch, lendTools, liveNativeTools } from "../lib/tools/native-dispatch.js"
import { deferred, traceRecorder } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

let additions = 0
const add = defineTool({
  description: "Add two numbers",
  execute: ({ a, b }: { a: number; b: number }) => {
    additions++
    return { sum: a + b }
  },
  input: z.object({ a: z.number(), b: z.number() }),
  name: "add",
})
const lie = defineTool({
  description: "Returns the wrong shape",
  execute: () => ({ sum: "many" }),
  input: z.object({}),
  name: "lie",
  output: z.object({ sum: z.number() }),
})
const fail = defineTool({
  description: "Throws",
  execute: ({ how }: { how: string }) => {
    if (how === "sync") throw new TypeError("sync failure")
    if (how === "string") throw "a bare string"
    return Promise.reject(new RangeError("async failure"))
  },
  input: z.object({ how: z.string() }),
  name: "fail",
})

type Step = { tool: string; input: unknown }
const lines = (text: string) => text.split("\n").map((line) => JSON.parse(line))
const run = (steps: Step[], tree = <Agent><Tool use={add} /><Tool use={lie} /><Tool use={fail} />go</Agent>, concurrent = false) =>
  new AmlRuntime({ agentProvider: nativeScriptedProvider({ concurrent, steps }) }).evaluate(tree)

afterEach(() => {
  // Every run returns its token and its lent Tools, whatever happened.
  expect(liveCancellations()).toBe(0)
  expect(liveNativeTools()).toEqual({ calls: 0, tools: 0 })
})

describe("calling JS Tools from Rust", () => {
  it("runs each scripted call through the Tool and answers with the outputs", async () => {
    const text = await run([
      { input: { a: 1, b: 2 }, tool: "add" },
      { input: '{"a":3,"b":4}', tool: "add" },
    ])
    // The second input is a JSON string: the TL-3 pipeline parses it, as for a JS provider.
    expect(lines(text)).toEqual([{ ok: true, value: { sum: 3 } }, { ok: true, value: { sum: 7 } }])
  })

  it("opens a tool span under the Agent span for every native call", async () => {
    const { events, sink } = traceRecorder()
    const runtime = new AmlRuntime({ agentProvider: nativeScriptedProvider({ steps: [{ input: { a: 1, b: 1 }, tool: "add" }] }) })
    runtime.on("trace", sink)
    await runtime.evaluate(<Agent><Tool use={add} />go</Agent>)
    const agent = events.find((e) => e.type === "span.start" && e.kind === "agent")
    const tool = events.find((e) => e.type === "span.start" && e.kind === "tool")
    expect(tool).toMatchObject({ name: "add", parentSpanId: agent.spanId })
    expect(events.find((e) => e.type === "span.end" && e.spanId === tool.spanId).status).toBe("ok")
  })

  it("reports ToolInputError and ToolOutputError as data; invalid input never runs the executor", async () => {
    const before = additions
    const text = await run([
      { input: { a: "one", b: 2 }, tool: "add" },
      { input: {}, tool: "lie" },
      { input: {}, tool: "missing" },
    ])
    expect(additions).toBe(before)
    expect(lines(text)).toEqual([
      { kind: "input", message: 'Tool "add" input failed schema validation', name: "ToolInputError", ok: false },
      { kind: "output", message: 'Tool "lie" output failed schema validation', name: "ToolOutputError", ok: false },
      { kind: "unavailable", message: 'Tool "missing" is not granted to this Agent', name: "Error", ok: false },
    ])
  })

  it("survives throwing executors and reports what they threw", async () => {
    const text = await run(["sync", "async", "string"].map((how) => ({ input: { how }, tool: "fail" })))
    expect(lines(text)).toEqual([
      { kind: "failed", message: "sync failure", name: "TypeError", ok: false },
      { kind: "failed", message: "async failure", name: "RangeError", ok: false },
      { kind: "failed", message: "a bare string", name: "string", ok: false },
    ])
    // The process is still healthy: the next native run works.
    expect(lines(await run([{ input: { a: 2, b: 2 }, tool: "add" }]))).toEqual([{ ok: true, value: { sum: 4 } }])
  })

  it("survives a dispatcher callback that throws, rejects or answers garbage (call_async_catch)", async () => {
    const broken: [() => unknown, string][] = [
      [
        () => {
          throw new Error("dispatcher broke")
        },
        "AML tool dispatcher failed: dispatcher broke",
      ],
      [() => Promise.reject(new Error("dispatcher rejected")), "AML tool dispatcher failed: dispatcher rejected"],
      // Not a Promise: napi's conversion fails (its wording is napi's own).
      [() => 42, "AML tool dispatcher failed: "],
      [() => Promise.resolve({ ok: true, value: "not json" }), "AML tool dispatcher returned output that is not JSON"],
    ]
    try {
      for (const [callback, message] of broken) {
        toolDispatcherInstall(callback as never)
        const outcomes = lines(await run([{ input: { a: 1, b: 1 }, tool: "add" }]))
        expect(outcomes).toEqual([{ kind: "unavailable", message: expect.stringMatching(message), name: "Error", ok: false }])
      }
    } finally {
      toolDispatcherInstall(dispatch)
    }
    expect(lines(await run([{ input: { a: 1, b: 1 }, tool: "add" }]))).toEqual([{ ok: true, value: { sum: 2 } }])
  })

  it("runs 500 native calls concurrently", async () => {
    let inFlight = 0
    const all = deferred()
    const gate = defineTool({
      description: "Waits until 500 calls are in flight",
      execute: async ({ i }: { i: number }) => {
        // Opens only when every call is running at once: a serial dispatcher would hang.
        if (++inFlight === 500) all.resolve()
        await all.promise
        return { i }
      },
      input: z.object({ i: z.number() }),
      name: "gate",
    })
    const steps = Array.from({ length: 500 }, (_, i) => ({ input: { i }, tool: "gate" }))
    const text = await run(steps, <Agent><Tool use={gate} />go</Agent>, true)
    expect(lines(text)).toEqual(steps.map(({ input }) => ({ ok: true, value: input })))
  })
})

describe("cancellation", () => {
  const stuck = (started: () => void, seen: AbortSignal[]) =>
    defineTool({
      description: "Never settles",
      execute: (_: unknown, { signal }: { signal: AbortSignal }) => {
        seen.push(signal)
        started()
        return new Promise(() => {})
      },
      input: z.object({}),
      name: "stuck",
    })

  it("settles the pending native call with the abort reason; the Agent's wrapper carries it", async () => {
    const started = deferred()
    const seen: AbortSignal[] = []
    const provider = nativeScriptedProvider({ steps: [{ input: { a: 1, b: 2 }, tool: "add" }, { input: {}, tool: "stuck" }, { input: { a: 0, b: 0 }, tool: "add" }] })
    const controller = new AbortController()
    const reason = new Error("stop now")
    const evaluation = new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent><Tool use={add} /><Tool use={stuck(started.resolve, seen)} />go</Agent>,
      { signal: controller.signal },
    )
    await started.promise
    controller.abort(reason)
    expect((await failureOf(() => evaluation)).cause).toBe(reason)
    expect(seen[0].aborted).toBe(true)
    const [report] = provider.reports
    expect(report.cancelled).toBe(true)
    // JS confirmed the abort with its reason; the step after it never ran.
    expect(lines(report.text)).toEqual([
      { ok: true, value: { sum: 3 } },
      { kind: "cancelled", message: "stop now", name: "Error", ok: false },
    ])
  })

  it("settles every pending call of a concurrent script", async () => {
    let count = 0
    const allStarted = deferred()
    const seen: AbortSignal[] = []
    let listenersAtFirstCall = 0
    const controller = new AbortController()
    const tool = stuck(() => {
      if (++count === 1) listenersAtFirstCall = getEventListeners(controller.signal, "abort").length
      if (count === 20) allStarted.resolve()
    }, seen)
    const provider = nativeScriptedProvider({ concurrent: true, steps: Array.from({ length: 20 }, () => ({ input: {}, tool: "stuck" })) })
    const evaluation = new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={tool} />go</Agent>, { signal: controller.signal })
    await allStarted.promise
    // 20 calls run at once on the caller's signal: they share one forwarding listener (no
    // listener per call, which made Node warn about a leak past ten).
    expect(getEventListeners(controller.signal, "abort").length).toBe(listenersAtFirstCall)
    controller.abort(new RangeError("enough"))
    expect((await failureOf(() => evaluation)).cause).toBeInstanceOf(RangeError)
    expect(seen.every((signal) => signal.aborted)).toBe(true)
    const outcomes = lines(provider.reports[0].text)
    expect(outcomes).toEqual(Array(20).fill({ kind: "cancelled", message: "enough", name: "RangeError", ok: false }))
  })

  it("rejects a pre-aborted run with the reason without starting Rust work", async () => {
    const provider = nativeScriptedProvider({ steps: [{ input: { a: 1, b: 1 }, tool: "add" }] })
    const reason = new Error("early")
    const signal = AbortSignal.abort(reason)
    expect(await failureOf(() => provider.run({ tools: [] } as never, { signal } as never))).toBe(reason)
    expect(provider.reports).toEqual([])
  })

  it("a Rust-side cancel aborts the running executor's signal (dispatch op 1)", async () => {
    const seen = deferred<AbortSignal>()
    const wait = {
      description: "Waits for its signal",
      execute: (_: unknown, { signal }: { signal: AbortSignal }) => {
        seen.resolve(signal)
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
      },
      inputSchema: { type: "object" },
      kind: "javascript",
      name: "wait",
    }
    // The evaluation signal never aborts here: only the native run's token is cancelled.
    const lent = lendTools([wait], new AbortController().signal)
    const token = cancellationCreate()
    try {
      const running = nativeScriptRun(token, JSON.stringify({ steps: [{ input: {}, tool: "wait" }] }), lent.json)
      const signal = await seen.promise
      cancellationCancel(token)
      const result = await running
      expect(signal.aborted).toBe(true)
      expect(result.cancelled).toBe(true)
      expect(lines(result.text)).toEqual([{ kind: "cancelled", message: "This operation was aborted", name: "AbortError", ok: false }])
    } finally {
      cancellationRelease(token)
      lent.release()
    }
  })
})

describe("nativeScriptedProvider() plans", () => {
  it("rejects malformed plans with TypeErrors", () => {
    const bad = (plan: unknown, message: string | RegExp) => {
      const error = (() => {
        try {
          nativeScriptedProvider(plan as never)
        } catch (error) {
          return error as Error
        }
        throw new Error("expected a TypeError")
      })()
      expect(error).toBeInstanceOf(TypeError)
      expect(error.message).toMatch(message)
    }
    bad(null, "nativeScriptedProvider plan must be an object")
    bad({ name: " x", steps: [] }, "nativeScriptedProvider name must be a non-empty normalized string")
    bad({ steps: [{ tool: "add" }] }, /^nativeScriptedProvider plan is invalid: missing field `input`/)
    bad({ steps: "add" }, /^nativeScriptedProvider plan is invalid: /)
    expect(nativeScriptedProvider({ steps: [] }).name).toBe("native-scripted")
  })

  it("answers with an empty text when the plan has no steps", async () => {
    expect(await run([])).toBe("")
  })

  it("answers a ref that is no longer lent with an EvaluationError outcome", async () => {
    const lent = lendTools([{ description: "d", execute: () => 1, inputSchema: {}, kind: "javascript", name: "t" }], new AbortController().signal)
    const [{ ref }] = JSON.parse(lent.json)
    lent.release()
    expect(await dispatch(0, 1, ref, "{}")).toEqual({ message: `Tool reference ${ref} is no longer lent to a provider`, name: "EvaluationError", ok: false })
  })

  it("wraps a closed token as a provider failure, not a crash", async () => {
    const lent = lendTools([], new AbortController().signal)
    expectError(await failureOf(() => nativeScriptRun(987_654, '{"steps":[]}', lent.json)), Error, "AML cancellation token is closed")
    lent.release()
  })
})
