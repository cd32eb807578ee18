// `aml run examples/concurrency.tsx` — explicit concurrency with Promise.all: three
// specialists run at once (the slowest starts first), and the results keep authored order.
import { Agent, evaluate } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const delays: Record<string, number> = { security: 30, performance: 10, style: 1 }

const provider = new DeterministicAgentProvider({
  name: "specialists",
  respond: async (request) => {
    const area = request.prompt.split(" ")[1] ?? ""
    await new Promise((resolve) => setTimeout(resolve, delays[area] ?? 0))
    return { text: `${area}: no blocking issues` }
  },
})

async function Review() {
  const areas = ["security", "performance", "style"]
  const findings = await Promise.all(
    areas.map((area) => evaluate(<Agent provider={provider}>Review {area} of the change.</Agent>)),
  )
  return findings.map((finding) => `- ${finding}`).join("\n")
}

export default <Review />
