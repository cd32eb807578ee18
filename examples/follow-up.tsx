// `aml run examples/follow-up.tsx` — <FollowUp> adds later turns to the same Agent
// session; the provider sees them in order and the session's final answer is the result.
import { Agent, FollowUp, System } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const provider = new DeterministicAgentProvider({
  name: "editor",
  respond: (request) => {
    const turns = [request.prompt, ...(request.followUps ?? [])]
    return { text: turns.map((turn, index) => `turn ${index + 1}: ${turn}`).join("\n") }
  },
})

export default (
  <Agent provider={provider}>
    <System>You are a careful editor.</System>
    Draft release notes for version 2.
    <FollowUp>Tighten the draft to three bullets.</FollowUp>
    <FollowUp>Check every bullet names a user-visible change.</FollowUp>
  </Agent>
)
