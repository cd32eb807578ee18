// `aml run examples/parallel.tsx` — <Parallel> evaluates each child as a concurrent branch
// and joins them in authored order before its parent continues.
import { Agent, Parallel } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const provider = new DeterministicAgentProvider({
  name: "branches",
  respond: async (request) => {
    // The first branch is the slowest; the joined text still follows authored order.
    await new Promise((resolve) => setTimeout(resolve, request.prompt.startsWith("Outline") ? 20 : 1))
    return { text: `${request.prompt} -> done\n` }
  },
})

const summarizer = new DeterministicAgentProvider({
  name: "summarizer",
  respond: (request) => ({ text: `Summary of:\n${request.prompt}` }),
})

export default (
  <Agent provider={summarizer}>
    <Parallel>
      <Agent provider={provider}>Outline the API</Agent>
      <Agent provider={provider}>List the risks</Agent>
      <Agent provider={provider}>Draft the tests</Agent>
    </Parallel>
  </Agent>
)
