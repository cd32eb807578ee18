// <Agent> limits (INVENTORY AG-1, LIM-1): maxTurnsPerAgent and maxAgentCalls.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, FollowUp, evaluate } from "@aml-jsx/sdk"

import { expectEvaluationError, recorder } from "./support/agent.js"

describe("limits", () => {
  test("maxTurnsPerAgent counts the initial prompt plus each FollowUp, checked after children", async () => {
    const { calls, provider } = recorder()
    const child = vi.fn(() => "c")
    const Child = child as any
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 2 }).evaluate(
        <Agent>
          <Child />
          <FollowUp>one</FollowUp>
          <FollowUp>two</FollowUp>
        </Agent>,
      ),
      "Agent span-1 exceeded maxTurnsPerAgent 2",
    )
    expect(child).toHaveBeenCalledTimes(1)
    expect(calls).toEqual([])
    const ok = await new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 3 }).evaluate(
      <Agent>
        p<FollowUp>one</FollowUp>
        <FollowUp>two</FollowUp>
      </Agent>,
    )
    expect(ok).toBe("[p:p]")
  })

  test("maxTurnsPerAgent 1 allows a plain Agent and rejects any FollowUp", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 1 })
    expect(await runtime.evaluate(<Agent>solo</Agent>)).toBe("[p:solo]")
    await expectEvaluationError(
      runtime.evaluate(
        <Agent>
          a<FollowUp>b</FollowUp>
        </Agent>,
      ),
      "Agent span-1 exceeded maxTurnsPerAgent 1",
    )
  })

  test("maxTurnsPerAgent 0 is unlimited; the default is 16 turns", async () => {
    const { calls, provider } = recorder()
    const many = (n: number) => Array.from({ length: n }, (_, i) => <FollowUp>{`f${i}`}</FollowUp>)
    await new AmlRuntime({ agentProvider: provider, maxTurnsPerAgent: 0 }).evaluate(<Agent>x{many(40)}</Agent>)
    expect(calls[0].request.followUps).toHaveLength(40)
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x{many(15)}</Agent>)
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x{many(16)}</Agent>),
      "Agent span-1 exceeded maxTurnsPerAgent 16",
    )
  })

  test("maxAgentCalls rejects the first Agent over budget, naming its span", async () => {
    const { calls, provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
        <>
          <Agent>first</Agent>
          <Agent>second</Agent>
        </>,
      ),
      "AML evaluation exceeded maxAgentCalls 1 at Agent span-2",
    )
    expect(calls.map((c) => c.request.prompt)).toEqual(["first"])
  })

  test("maxAgentCalls is reserved in completion order: a parent over budget after its child", async () => {
    const { calls, provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
        <Agent>
          parent <Agent>child</Agent>
        </Agent>,
      ),
      "AML evaluation exceeded maxAgentCalls 1 at Agent span-1",
    )
    expect(calls.map((c) => c.request.trace.spanId)).toEqual(["span-2"])
  })

  test("a multi-turn Agent counts once", async () => {
    const { calls, provider } = recorder()
    const result = await new AmlRuntime({ agentProvider: provider, maxAgentCalls: 1 }).evaluate(
      <Agent>
        a<FollowUp>b</FollowUp>
        <FollowUp>c</FollowUp>
        <FollowUp>d</FollowUp>
      </Agent>,
    )
    expect(result).toBe("[p:a]")
    expect(calls).toHaveLength(1)
  })

  test("maxAgentCalls counts across component-local evaluations of one domain, not across domains", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 2 })
    async function Two() {
      const [a, b] = await Promise.all([evaluate(<Agent>a</Agent>), evaluate(<Agent>b</Agent>)])
      return a + b
    }
    expect(await runtime.evaluate(<Two />)).toBe("[p:a][p:b]")
    expect(await runtime.evaluate(<Two />)).toBe("[p:a][p:b]")
    await expectEvaluationError(
      runtime.evaluate(
        <>
          <Two />
          <Agent>third</Agent>
        </>,
      ),
      "AML evaluation exceeded maxAgentCalls 2 at Agent span-3",
    )
  })

  test("maxAgentCalls 0 is unlimited; the default is 32", async () => {
    const { calls, provider } = recorder("p", () => ({ text: "." }))
    const agents = (n: number) => Array.from({ length: n }, (_, i) => <Agent>{`a${i}`}</Agent>)
    expect(await new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0 }).evaluate(agents(40))).toBe(".".repeat(40))
    expect(calls).toHaveLength(40)
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(agents(32))).toBe(".".repeat(32))
    await expectEvaluationError(
      new AmlRuntime({ agentProvider: provider }).evaluate(agents(33)),
      "AML evaluation exceeded maxAgentCalls 32 at Agent span-33",
    )
  })

  test("an Agent rejected for missing provider does not consume a call", async () => {
    const { provider } = recorder()
    const runtime = new AmlRuntime({ maxAgentCalls: 1 })
    async function Tolerant() {
      const failed = await evaluate(<Agent>no provider</Agent>).catch((error: Error) => error.message)
      const ok = await evaluate(<Agent provider={provider}>with provider</Agent>)
      return `${failed}|${ok}`
    }
    expect(await runtime.evaluate(<Tolerant />)).toBe("Agent span-1 has no provider|[p:with provider]")
  })
})
