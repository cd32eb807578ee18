// Agents with a deterministic provider: a child Agent's answer lands in its parent's prompt,
// a <System> fragment joins the runtime system, and a <FollowUp> adds a second turn.
//
//   npx tsx examples/agents.tsx

import { Agent, AmlRuntime, FollowUp, System } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const agentProvider = new DeterministicAgentProvider({
  respond: (request) => ({
    text: `[${request.prompt}${request.followUps ? ` → ${request.followUps.join(" → ")}` : ""}]`,
  }),
})

function Specialist() {
  return <Agent>Find the riskiest change</Agent>
}

const runtime = new AmlRuntime({ agentProvider, system: "Be brief." })
const review = await runtime.evaluate(
  <Agent>
    <System>Answer as a reviewer.</System>
    Specialist said: <Specialist />
    <FollowUp>Now write the summary</FollowUp>
  </Agent>,
)

console.log(review)
console.log(`system of the last call: ${JSON.stringify(agentProvider.calls.at(-1)?.request.system)}`)
