// The Restate worker of `npm run bench -- durable` (bench/durable.js), run on Node 22: one
// workflow of `n` sequential Agents whose provider answers at once, so the time is AML's and
// Restate's.
import * as restate from "@restatedev/restate-sdk"

import { Agent, AmlRuntime, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { amlWorkflow } from "../restate/index.js"

async function Steps({ n }) {
  let last = ""
  for (let i = 0; i < n; i++) last = await evaluate(jsx(Agent, { children: `step ${i}` }))
  return last
}

const runtime = new AmlRuntime({ agentProvider: { name: "bench", run: async (request) => ({ text: request.prompt }) }, maxAgentCalls: 0 })
const { journal, workflow } = await amlWorkflow({ name: "Bench", ingress: process.env.INGRESS, runtime, render: (input) => jsx(Steps, input) })
await restate.endpoint().bind(workflow).bind(journal).listen(Number(process.env.PORT))
