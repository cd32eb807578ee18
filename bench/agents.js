// Agent workloads of the Agents issue: fan-out through component-local evaluate(), many
// child Agents inside one parent, and peak memory of the fan-out run.
import { Agent, AmlRuntime, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

export const FAN_OUT = 2_000
const CHILDREN = 500

// A deterministic provider: the cheapest honest provider, so the numbers are runtime cost.
export const provider = {
  name: "bench",
  async run(request) {
    return { text: request.prompt.length > 40 ? "long" : request.prompt }
  },
}

export function FanOut() {
  return Promise.all(
    Array.from({ length: FAN_OUT }, (_, i) => evaluate(jsx(Agent, { children: `task ${i}` }))),
  ).then((results) => results.length)
}

function parentWithChildren() {
  const children = []
  for (let i = 0; i < CHILDREN; i++) children.push(jsx(Agent, { children: `child ${i}` }))
  return jsx(Agent, { children })
}

export async function agentBenchmarks() {
  const runtime = new AmlRuntime({
    agentProvider: provider,
    maxAgentCalls: 0,
    maxConcurrentAgents: 0,
  })
  await measure("2,000 fanned-out Agents (Promise.all evaluate)", {
    items: FAN_OUT,
    run: () => runtime.evaluate(jsx(FanOut, {})),
  })
  await measure("500 child Agents inside one parent", {
    items: CHILDREN + 1,
    run: () => runtime.evaluate(parentWithChildren()),
  })
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  await runtime.evaluate(jsx(FanOut, {}))
  const peak = Math.max(before, process.resourceUsage().maxRSS * 1024)
  console.log(`${"peak RSS after the 2,000-Agent run".padEnd(48)} ${(peak / 1048576).toFixed(1)} MiB (process max RSS)`)
}
