// The evaluation journal (issue 13): 2,000 fanned-out Agents without a journal, recording
// into a fresh in-memory journal, and replaying from a full one. Targets: recording ≤ 1.5×
// and replaying ≤ 0.5× the run without a journal.
import { Agent, AmlRuntime, createMemoryJournal, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

const FAN_OUT = 2_000

// The same deterministic provider as the agents group: the numbers are runtime cost.
const provider = {
  name: "bench",
  async run(request) {
    return { text: request.prompt.length > 40 ? "long" : request.prompt }
  },
}

// A provider that answers after one macrotask, as any provider doing I/O does at least.
const ioProvider = {
  name: "bench",
  run: (request) => new Promise((resolve) => setImmediate(() => resolve({ text: request.prompt }))),
}

function FanOut() {
  return Promise.all(
    Array.from({ length: FAN_OUT }, (_, i) => evaluate(jsx(Agent, { children: `task ${i}` }))),
  ).then((results) => results.length)
}

async function compare(label, agentProvider) {
  const runtime = new AmlRuntime({ agentProvider, maxAgentCalls: 0, maxConcurrentAgents: 0 })
  const plain = await measure(`${label}, no journal`, {
    items: FAN_OUT,
    run: () => runtime.evaluate(jsx(FanOut, {})),
  })
  const recording = await measure(`${label}, recording (memory)`, {
    items: FAN_OUT,
    run: () => runtime.evaluate(jsx(FanOut, {}), { journal: createMemoryJournal() }),
  })
  const full = createMemoryJournal()
  await runtime.evaluate(jsx(FanOut, {}), { journal: full })
  const replaying = await measure(`${label}, replaying (memory)`, {
    items: FAN_OUT,
    run: () => runtime.evaluate(jsx(FanOut, {}), { journal: full }),
  })
  console.log(`${"  recording / no journal".padEnd(48)} ${(recording / plain).toFixed(2)}× (target ≤ 1.5×)`)
  console.log(`${"  replaying / no journal".padEnd(48)} ${(replaying / plain).toFixed(2)}× (target ≤ 0.5×)`)
}

export async function journalBenchmarks() {
  await compare("2,000 fanned-out Agents", provider)
  await compare("2,000 Agents, provider after one macrotask", ioProvider)
}
