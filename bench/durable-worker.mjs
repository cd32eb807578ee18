// The Restate worker of `npm run bench -- durable` (bench/durable.js), run on Node 22: `Bench`,
// `n` sequential Agents whose provider answers at once, so the time is AML's and Restate's; and
// `Large`, `n` sequential Agents answering 1 MiB each, where KILL_AT=<i> makes this worker die
// when Agent i is called (so the other worker's retry loads the journal).
import * as restate from "@restatedev/restate-sdk"

import { Agent, AmlRuntime, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { amlWorkflow } from "../restate/index.js"

async function Steps({ n }) {
  let last = ""
  for (let i = 0; i < n; i++) last = await evaluate(jsx(Agent, { children: `step ${i}` }))
  return last
}

const MIB = "x".repeat(1 << 20)
async function Parts({ n }) {
  const sizes = []
  for (let i = 1; i <= n; i++) sizes.push((await evaluate(jsx(Agent, { children: `part ${i}` }))).length)
  return sizes.join(",")
}
const large = {
  name: "large",
  async run(request) {
    if (request.prompt === `part ${process.env.KILL_AT}`) process.kill(process.pid, "SIGKILL")
    return { text: `${request.prompt} ${MIB}` }
  },
}
const runtime = new AmlRuntime({ agentProvider: { name: "bench", run: async (request) => ({ text: request.prompt }) }, maxAgentCalls: 0 })
const { journal, workflow } = await amlWorkflow({ name: "Bench", ingress: process.env.INGRESS, runtime, render: (input) => jsx(Steps, input) })
const parts = await amlWorkflow({ name: "Large", ingress: process.env.INGRESS, runtime: new AmlRuntime({ agentProvider: large }), render: (input) => jsx(Parts, input) })
await restate.endpoint().bind(workflow).bind(journal).bind(parts.workflow).bind(parts.journal).listen(Number(process.env.PORT))
