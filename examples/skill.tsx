// `aml run examples/skill.tsx` — a reusable inline <Skill> becomes part of the Agent's
// instructions where it is placed (here its system channel).
import { Agent, Skill, System } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const provider = new DeterministicAgentProvider({
  name: "skilled",
  respond: (request) => ({ text: `system:\n${request.system}\nprompt: ${request.prompt}` }),
})

function ReviewChecklist() {
  return (
    <Skill name="review-checklist" description="How to review a change">
      Check error handling, input validation and tests.
    </Skill>
  )
}

export default (
  <Agent provider={provider}>
    <System>
      <ReviewChecklist />
    </System>
    Review the change to src/math.js.
  </Agent>
)
