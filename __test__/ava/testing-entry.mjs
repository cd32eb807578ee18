// Proves @aml-jsx/sdk/testing is runner-independent: the same helpers under ava, imported
// through the package's own exports (Node self-reference), with a real AmlRuntime run.
import test from "ava"

import { AbstractAgentProvider, Agent, AmlRuntime, FollowUp } from "@aml-jsx/sdk"
import { jsx, jsxs } from "@aml-jsx/sdk/jsx-runtime"
import {
  DeterministicAgentProvider,
  agentProviderConformance,
  createAgentExecutionContext,
} from "@aml-jsx/sdk/testing"

class RetainedProvider extends AbstractAgentProvider {
  constructor() {
    super("retained")
  }

  async openSession() {
    return {
      close: async () => {},
      runTurn: async (turn) => ({ text: `${turn.index}:${turn.prompt}` }),
    }
  }
}

test("agentProviderConformance accepts the deterministic and a retained-session provider", async (t) => {
  await t.notThrowsAsync(agentProviderConformance(new DeterministicAgentProvider({ name: "ava-fixture" })))
  await t.notThrowsAsync(agentProviderConformance(new RetainedProvider()))
})

test("agentProviderConformance rejects a provider that ignores cancellation", async (t) => {
  const provider = { name: "careless", run: async () => ({ text: "done anyway" }) }
  const error = await t.throwsAsync(agentProviderConformance(provider), { instanceOf: TypeError })
  t.is(error.message, "Agent provider must reject pre-cancelled execution")
})

test("a real evaluation records the normalized request", async (t) => {
  const agentProvider = new DeterministicAgentProvider({
    respond: (request, context, callIndex) => ({ text: `${callIndex}:${request.prompt}:${context.trace.spanId}` }),
  })
  const runtime = new AmlRuntime({ agentProvider, system: "Be brief." })
  const text = await runtime.evaluate(jsxs(Agent, { children: ["Review release 42.", jsx(FollowUp, { children: "Summarize." })] }))
  t.is(text, "0:Review release 42.:span-1")
  t.is(agentProvider.calls.length, 1)
  t.like(agentProvider.calls[0].request, { followUps: ["Summarize."], prompt: "Review release 42.", system: "Be brief." })
})

test("a retained-session subclass answers with its final turn", async (t) => {
  const runtime = new AmlRuntime({ agentProvider: new RetainedProvider() })
  t.is(await runtime.evaluate(jsxs(Agent, { children: ["a", jsx(FollowUp, { children: "b" })] })), "1:b")
})

test("createAgentExecutionContext is frozen with the test trace", (t) => {
  const context = createAgentExecutionContext()
  t.true(Object.isFrozen(context))
  t.deepEqual(context.trace, { runId: "agent-test", spanId: "agent-test" })
  t.false(context.signal.aborted)
})
