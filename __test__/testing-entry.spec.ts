// @aml-jsx/sdk/testing (INVENTORY TST-1, TST-5, TST-8) plus the evaluation-local events a
// provider sees through AgentExecutionContext.events (§2.1).
import { describe, expect, it } from "vitest"

import { AbstractAgentProvider, Agent, AmlRuntime, FollowUp, type AgentProvider } from "@aml-jsx/sdk"
import { jsx, jsxs } from "@aml-jsx/sdk/jsx-runtime"
import {
  DeterministicAgentProvider,
  agentProviderConformance,
  createAgentExecutionContext,
} from "@aml-jsx/sdk/testing"
import { expectExact, rejection } from "./support/errors.js"

const agent = (prompt: string) => jsx(Agent, { children: prompt })

describe("DeterministicAgentProvider", () => {
  it("keeps every call by default, the latest maxRecordedCalls when bounded, none after clearCalls()", async () => {
    const seen: number[] = []
    const unbounded = new DeterministicAgentProvider()
    const bounded = new DeterministicAgentProvider({
      maxRecordedCalls: 2,
      respond: (request, _context, index) => {
        seen.push(index)
        return { text: request.prompt }
      },
    })
    for (let i = 0; i < 7; i++) {
      await new AmlRuntime({ agentProvider: unbounded }).evaluate(agent(`p${i}`))
      await new AmlRuntime({ agentProvider: bounded }).evaluate(agent(`p${i}`))
    }
    expect(unbounded.calls.map((call) => call.request.prompt)).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6"])
    expect(bounded.calls.map((call) => call.request.prompt)).toEqual(["p5", "p6"])
    bounded.clearCalls()
    expect(bounded.calls).toEqual([])
    await new AmlRuntime({ agentProvider: bounded }).evaluate(agent("p7"))
    expect(bounded.calls.map((call) => call.request.prompt)).toEqual(["p7"])
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    const none = new DeterministicAgentProvider({ maxRecordedCalls: 0 })
    await new AmlRuntime({ agentProvider: none }).evaluate(agent("x"))
    expect(none.calls).toEqual([])
  })

  it.each([-1, 1.5, Number.NaN, "3"])("rejects maxRecordedCalls %j", (maxRecordedCalls) => {
    expect(() => new DeterministicAgentProvider({ maxRecordedCalls: maxRecordedCalls as any })).toThrow(
      new TypeError("Deterministic Agent provider maxRecordedCalls must be a non-negative integer or Infinity"),
    )
  })

  it("defaults to the name 'deterministic' and echoes the prompt", async () => {
    const provider = new DeterministicAgentProvider()
    expect(provider.name).toBe("deterministic")
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(agent("  echo me "))).resolves.toBe("echo me")
  })

  it.each([
    ["", "Deterministic Agent provider name must not be empty"],
    [" spaced", "Deterministic Agent provider name must already be normalized"],
    ["tab\t", "Deterministic Agent provider name must already be normalized"],
  ])("rejects the name %j", (name, message) => {
    let error: unknown
    try {
      new DeterministicAgentProvider({ name })
    } catch (caught) {
      error = caught
    }
    expectExact(error, TypeError, message)
  })

  it("records frozen {context, request} entries in order and passes the call index", async () => {
    const indexes: number[] = []
    const provider = new DeterministicAgentProvider({
      name: "fixture",
      respond: async (request, context, callIndex) => {
        indexes.push(callIndex)
        return { text: `${callIndex}:${request.prompt}:${context.trace.runId.length}` }
      },
    })
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate([agent("a"), agent("b")])).resolves.toBe("0:a:361:b:36")
    expect(indexes).toEqual([0, 1])
    const calls = provider.calls
    expect(calls.map((call) => call.request.prompt)).toEqual(["a", "b"])
    expect(Object.isFrozen(calls)).toBe(true)
    for (const call of calls) {
      expect(Object.isFrozen(call)).toBe(true)
      expect(Object.keys(call)).toEqual(["context", "request"])
      expect(Object.isFrozen(call.context)).toBe(true)
      expect(Object.isFrozen(call.request)).toBe(true)
    }
    expect(calls[0]!.context.trace.spanId).toBe("span-1")
    expect(provider.calls).not.toBe(calls)
  })

  it("passes follow-ups through the request", async () => {
    const provider = new DeterministicAgentProvider()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      jsxs(Agent, { children: ["first", jsx(FollowUp, { children: "second" })] }),
    )
    expect(provider.calls[0]!.request.followUps).toEqual(["second"])
  })

  it("rejects a pre-aborted signal with its reason without recording or responding", async () => {
    let responded = false
    const provider = new DeterministicAgentProvider({ respond: () => ((responded = true), { text: "" }) })
    const controller = new AbortController()
    const reason = new Error("pre")
    controller.abort(reason)
    const context = createAgentExecutionContext({ signal: controller.signal })
    expect(await rejection(provider.run({ prompt: "x" } as never, context))).toBe(reason)
    expect(provider.calls).toEqual([])
    expect(responded).toBe(false)
  })

  it("propagates the respond failure itself", async () => {
    const failure = new Error("fixture failure")
    const provider = new DeterministicAgentProvider({ respond: () => Promise.reject(failure) })
    expect(await rejection(provider.run({ prompt: "x" } as never, createAgentExecutionContext()))).toBe(failure)
    expect(provider.calls).toHaveLength(1)
  })

  it("supports a Sandbox only when the option returns exactly true", () => {
    const sandbox = { kind: "sandbox" } as never
    expect(new DeterministicAgentProvider().supportsSandbox(sandbox)).toBe(false)
    const seen: unknown[] = []
    const yes = new DeterministicAgentProvider({ supportsSandbox: (s) => (seen.push(s), true) })
    expect(yes.supportsSandbox(sandbox)).toBe(true)
    expect(seen).toEqual([sandbox])
    const truthy = new DeterministicAgentProvider({ supportsSandbox: () => 1 as unknown as boolean })
    expect(truthy.supportsSandbox(sandbox)).toBe(false)
  })
})

describe("createAgentExecutionContext", () => {
  it("builds a frozen context with no-op events, a fresh signal and the test trace", () => {
    const context = createAgentExecutionContext()
    const other = createAgentExecutionContext()
    expect(Object.isFrozen(context)).toBe(true)
    expect(Object.keys(context)).toEqual(["events", "signal", "trace"])
    expect(context.trace).toEqual({ runId: "agent-test", spanId: "agent-test" })
    expect(Object.isFrozen(context.trace)).toBe(true)
    expect(context.signal).toBeInstanceOf(AbortSignal)
    expect(context.signal.aborted).toBe(false)
    expect(other.signal).not.toBe(context.signal)
    const off = context.events.on("finish", () => {
      throw new Error("never called")
    })
    expect(off()).toBeUndefined()
    expect(context.events.once("trace", () => {})()).toBeUndefined()
  })

  it("applies overrides and keeps defaults for overrides left undefined", () => {
    const signal = AbortSignal.abort()
    const trace = { parentSpanId: "p", runId: "r", spanId: "s" }
    const sandbox = { kind: "sandbox" } as never
    const context = createAgentExecutionContext({ sandbox, signal, trace })
    expect(context.signal).toBe(signal)
    // A copy (testing-context.spec.ts covers its exact shape).
    expect(context.trace).toEqual(trace)
    expect(context.sandbox).toBe(sandbox)
    expect(Object.isFrozen(context)).toBe(true)
    const kept = createAgentExecutionContext({ signal: undefined } as never)
    expect(kept.signal).toBeInstanceOf(AbortSignal)
  })
})

describe("agentProviderConformance", () => {
  it("accepts the deterministic provider and a retained-session subclass", async () => {
    await expect(agentProviderConformance(new DeterministicAgentProvider())).resolves.toBeUndefined()
    class Retained extends AbstractAgentProvider<"retained"> {
      constructor() {
        super("retained")
      }
      protected async openSession() {
        return { close: async () => {}, runTurn: async () => ({ text: "ok" }) }
      }
    }
    await expect(agentProviderConformance(new Retained())).resolves.toBeUndefined()
  })

  it("sends the documented request twice, the second time with a pre-aborted signal", async () => {
    const provider = new DeterministicAgentProvider()
    await agentProviderConformance(provider)
    const [first, second] = provider.calls.length === 1 ? [provider.calls[0]!, undefined] : provider.calls
    expect(first.request).toEqual({
      followUps: ["agent-provider-conformance-final"],
      mcpServers: [],
      permissions: { filesystem: "read-write", network: true, shell: true },
      prompt: "agent-provider-conformance",
      system: "Follow the provider contract.",
      tools: [],
    })
    expect(first.context.trace).toEqual({ runId: "agent-test", spanId: "agent-test" })
    // The deterministic provider records nothing for the pre-cancelled call.
    expect(second).toBeUndefined()
  })

  it("cancels with the documented reason and calls run with the provider as this", async () => {
    const seen: any[] = []
    const provider: AgentProvider = {
      name: "spy",
      async run(_request, context) {
        seen.push([this, context.signal.aborted, context.signal.reason?.message])
        context.signal.throwIfAborted()
        return { text: "" }
      },
    }
    await agentProviderConformance(provider)
    expect(seen).toEqual([
      [provider, false, undefined],
      [provider, true, "agent-provider-conformance-cancelled"],
    ])
  })

  it.each([
    [{}, "Agent provider name must be a non-empty string"],
    [{ name: "x" }, "Agent provider run must be a function"],
    [null, "Agent provider must be an object"],
  ])("validates the provider shape first (%j)", async (provider, message) => {
    expectExact(await rejection(agentProviderConformance(provider as never)), TypeError, message)
  })

  it.each([[null], [{ text: 1 }], ["text"], [{}]])("rejects the response %j", async (response) => {
    const provider = { name: "bad", run: async () => response as never }
    const error = await rejection(agentProviderConformance(provider))
    expectExact(error, TypeError, "Agent provider must return a text response")
  })

  it("rejects a provider that ignores a pre-cancelled signal", async () => {
    const provider = { name: "ignores", run: async () => ({ text: "" }) }
    const error = await rejection(agentProviderConformance(provider))
    expectExact(error, TypeError, "Agent provider must reject pre-cancelled execution")
  })

  it("rejects a provider that rejects with another error, keeping it as cause", async () => {
    const other = new Error("cancelled differently")
    const provider = {
      name: "wrong-reason",
      run: async (_request: unknown, context: { signal: AbortSignal }) => {
        if (context.signal.aborted) throw other
        return { text: "" }
      },
    }
    const error = await rejection(agentProviderConformance(provider as never))
    expectExact(error, TypeError, "Agent provider must reject pre-cancelled execution with the AbortSignal reason")
    expect(error.cause).toBe(other)
  })
})

describe("evaluation-local events through the execution context", () => {
  it("delivers finish to a listener a provider registers, then closes the scope", async () => {
    const finished: any[] = []
    let saved: any
    const provider = new DeterministicAgentProvider({
      respond: (request, context) => {
        saved = context
        context.events.on("finish", (event) => void finished.push(["on", event.status, event.runId]))
        context.events.once("finish", (event) => void finished.push(["once", event.status]))
        return { text: request.prompt }
      },
    })
    await new AmlRuntime({ agentProvider: provider }).evaluate(agent("x"))
    expect(finished).toEqual([
      ["on", "ok", saved.trace.runId],
      ["once", "ok"],
    ])
    for (const register of [() => saved.events.on("finish", () => {}), () => saved.events.once("start", () => {})]) {
      let error: unknown
      try {
        register()
      } catch (caught) {
        error = caught
      }
      expectExact(error, Error, "AML evaluation event scope is closed")
    }
  })
})
