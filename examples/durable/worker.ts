// A Restate worker that runs an AML review workflow durably (docs/DURABLE.md). Run on Node 22+
// (Node strips the types): `INGRESS=http://127.0.0.1:8080 PORT=9080 AML_RESTATE_JOURNAL_SECRET=<32+
// characters, the same for every worker> node examples/durable/worker.ts`.
// The provider is deterministic so the example needs no credentials; use a coding agent
// (opencodeAgent(), codexAgent(), …) in production.
import * as restate from "@restatedev/restate-sdk"
import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"
import { amlWorkflow } from "@aml-jsx/sdk/restate"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

interface ReviewInput {
  topic: string
}

/** Three steps; a retry after a crash replays the settled ones from the journal object. */
async function Review({ topic }: ReviewInput): Promise<string> {
  const outline = await evaluate(jsx(Agent, { children: `Outline a review of ${topic}` }))
  const draft = await evaluate(jsx(Agent, { children: `Draft the review from: ${outline}` }))
  return evaluate(jsx(Agent, { children: `Critique and finish: ${draft}` }))
}

const ingress = process.env["INGRESS"] ?? "http://127.0.0.1:8080"
const port = Number(process.env["PORT"] ?? 9080)
const agentProvider = new DeterministicAgentProvider({ respond: (request) => ({ text: `[${request.prompt.slice(0, 40)}]` }) })

const review = await amlWorkflow<ReviewInput>({
  name: "Review",
  ingress,
  runtime: new AmlRuntime({ agentProvider }),
  render: (input) => jsx(Review, input),
})

await restate.endpoint().bind(review.workflow).bind(review.journal).listen(port)
