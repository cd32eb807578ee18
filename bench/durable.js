// Durable workflows on Restate (issue 23): the per-Agent cost of a step recorded in Restate
// (a local restate-server, one worker on Node 22, the journal object over the ingress)
// against the in-memory journal and no journal, for sequential Agents. No target yet.
import { fileURLToPath } from "node:url"

import { Agent, AmlRuntime, createMemoryJournal, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { livePorts, startProxy, startRestate, startWorker } from "../scripts/restate-local.js"
import { startIngressHop } from "./ingress-hop.js"

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

const LARGE_AGENTS = 30
const LARGE_ROUNDS = 3

const ms = (values) => `${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`

/**
 * A journal of 30 answers of 1 MiB (issue 34 §3): the record time of the first 5 and the last 5
 * records of a run (target: the last at most 3× the first), and the time to load the journal
 * of 29 such answers on a retry (the first worker dies when Agent 30 is called).
 */
async function largeJournal() {
  const server = await startRestate()
  const hop = await startIngressHop(server.ingress)
  const script = fileURLToPath(new URL("./durable-worker.mjs", import.meta.url))
  const env = { INGRESS: hop.url, RESTATE_LOGGING: "ERROR" }
  let workers = []
  const proxy = await startProxy(() => livePorts(workers))
  const run = async (n) => {
    const id = `large-${process.pid}-${Math.random().toString(36).slice(2)}`
    const sent = await fetch(`${server.ingress}/Large/${id}/run/send`, { body: JSON.stringify({ n }), headers: { "content-type": "application/json" }, method: "POST" })
    await sent.arrayBuffer()
    const output = await fetch(`${server.ingress}/restate/workflow/Large/${id}/attach`)
    const text = await output.text()
    if (!output.ok) throw new Error(`the Large workflow failed: ${output.status} ${text.slice(0, 300)}`)
  }
  try {
    const healthy = await startWorker(script, env)
    workers = [healthy]
    await server.register(proxy.uri)
    const first = []
    const last = []
    const loads = []
    const shipped = []
    for (let round = 0; round < LARGE_ROUNDS; round++) {
      hop.take()
      const before = proxy.traffic?.().toWorkers
      await run(LARGE_AGENTS)
      if (before !== undefined) shipped.push((proxy.traffic().toWorkers - before) / 2 ** 20)
      const records = hop.take().filter((request) => request.handler === "record" && request.status === 200)
      first.push(median(records.slice(0, 5).map((request) => request.ms)))
      last.push(median(records.slice(-5).map((request) => request.ms)))
      // The same run with a worker that dies at the last Agent: the retry loads 29 answers.
      workers = [await startWorker(script, { ...env, KILL_AT: String(LARGE_AGENTS) }), healthy]
      await run(LARGE_AGENTS)
      await workers[0].stop()
      workers = [healthy]
      const reading = hop.take().filter((request) => request.handler === "load" || request.handler === "page")
      const retry = reading.slice(reading.findLastIndex((request) => request.handler === "load"))
      const end = Math.max(...retry.map((request) => request.arrived + request.ms))
      loads.push(end - retry[0].arrived)
    }
    const ratio = median(last) / median(first)
    console.log(`${LARGE_AGENTS} Agents answering 1 MiB, record time, first 5 (median per run)`.padEnd(62), ms(first))
    console.log(`${LARGE_AGENTS} Agents answering 1 MiB, record time, last 5 (median per run)`.padEnd(62), ms(last), `→ ${ratio.toFixed(2)}× the first (target ≤ 3×)`)
    if (shipped.length > 0) {
      console.log(`${LARGE_AGENTS} Agents answering 1 MiB, MiB Restate sent the workers`.padEnd(62), `${median(shipped).toFixed(1)} MiB per run`)
    }
    console.log(`load of a journal of ${LARGE_AGENTS - 1} answers of 1 MiB on a retry`.padEnd(62), ms(loads), `(${LARGE_ROUNDS} runs)`)
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()))
    await proxy.stop()
    await hop.close()
    await server.stop()
  }
}

export async function durableBenchmarks() {
  await inProcess()
  await durable()
  await largeJournal()
}
