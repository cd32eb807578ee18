// Durable workflows on Restate (issue 23): the per-Agent cost of a step recorded in Restate
// (a local restate-server, one worker on Node 22, the journal object over the ingress)
// against the in-memory journal and no journal, for sequential Agents. No target yet.
import { fileURLToPath } from "node:url"

import { Agent, AmlRuntime, createMemoryJournal, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { startRestate, startWorker } from "../scripts/restate-local.js"

const AGENTS = 200
const ROUNDS = 5

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function Steps({ n }) {
  let last = ""
  for (let i = 0; i < n; i++) last = await evaluate(jsx(Agent, { children: `step ${i}` }))
  return last
}

function line(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  console.log(`${label.padEnd(62)} median ${median(samples).toFixed(1)} µs/Agent  (min–max ${sorted[0].toFixed(1)}–${sorted.at(-1).toFixed(1)}, ${samples.length} rounds × ${AGENTS} Agents)`)
}

async function inProcess() {
  const runtime = new AmlRuntime({ agentProvider: { name: "bench", run: async (request) => ({ text: request.prompt }) }, maxAgentCalls: 0 })
  const modes = { "no journal": () => ({}), "in-memory journal": () => ({ journal: createMemoryJournal() }) }
  for (const [name, options] of Object.entries(modes)) {
    const samples = []
    for (let round = 0; round < 11 + 2; round++) {
      const started = performance.now()
      await runtime.evaluate(jsx(Steps, { n: AGENTS }), options())
      if (round >= 2) samples.push(((performance.now() - started) * 1000) / AGENTS)
    }
    line(`${AGENTS} sequential Agents, ${name}`, samples)
  }
}

async function durable() {
  const server = await startRestate()
  let worker
  try {
    worker = await startWorker(fileURLToPath(new URL("./durable-worker.mjs", import.meta.url)), { INGRESS: server.ingress, RESTATE_LOGGING: "ERROR" })
    await server.register(`http://127.0.0.1:${worker.port}`)
    let ids = 0
    const run = async (n) => {
      const id = `bench-${process.pid}-${++ids}`
      const started = performance.now()
      const sent = await fetch(`${server.ingress}/Bench/${id}/run/send`, { body: JSON.stringify({ n }), headers: { "content-type": "application/json" }, method: "POST" })
      await sent.arrayBuffer()
      const output = await fetch(`${server.ingress}/restate/workflow/Bench/${id}/attach`)
      await output.arrayBuffer()
      if (!output.ok) throw new Error(`the Bench workflow failed: ${output.status}`)
      return performance.now() - started
    }
    const samples = []
    for (let round = 0; round < ROUNDS + 1; round++) {
      // The per-Agent cost is the difference to an empty workflow run the same way.
      const empty = await run(0)
      const full = await run(AGENTS)
      if (round >= 1) samples.push(((full - empty) * 1000) / AGENTS)
    }
    line(`${AGENTS} sequential Agents, journal in Restate (local server)`, samples)
  } finally {
    await worker?.stop()
    await server.stop()
  }
}

export async function durableBenchmarks() {
  await inProcess()
  await durable()
}
