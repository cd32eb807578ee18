// The evaluation journal (issue 13): 2,000 fanned-out Agents without a journal, recording
// into a fresh in-memory journal, and replaying from a full one. Targets: recording ≤ 1.5×
// and replaying ≤ 0.5× the run without a journal.
import { Agent, AmlRuntime, createMemoryJournal, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

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

const ROUNDS = 21
const WARMUP = 4

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/**
 * The three modes run interleaved, round by round in rotating order, so load on a shared
 * machine hits them alike; the ratios compare medians of the same rounds.
 */
async function compare(label, agentProvider) {
  const runtime = new AmlRuntime({ agentProvider, maxAgentCalls: 0, maxConcurrentAgents: 0 })
  const full = createMemoryJournal()
  await runtime.evaluate(jsx(FanOut, {}), { journal: full })
  const modes = [
    ["no journal", () => runtime.evaluate(jsx(FanOut, {}))],
    ["recording (memory)", () => runtime.evaluate(jsx(FanOut, {}), { journal: createMemoryJournal() })],
    ["replaying (memory)", () => runtime.evaluate(jsx(FanOut, {}), { journal: full })],
  ]
  const samples = modes.map(() => [])
  // Process CPU time per round too (all threads, so GC work counts): on a shared machine
  // wall time also holds the time other processes had the cores.
  const cpu = modes.map(() => [])
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < modes.length; k++) {
      const index = (round + k) % modes.length
      const started = performance.now()
      const used = process.cpuUsage()
      await modes[index][1]()
      const spent = process.cpuUsage(used)
      if (round >= WARMUP) {
        samples[index].push(((performance.now() - started) * 1000) / FAN_OUT)
        cpu[index].push((spent.user + spent.system) / FAN_OUT)
      }
    }
  }
  const medians = samples.map(median)
  const cpuMedians = cpu.map(median)
  modes.forEach(([name], index) => {
    const sorted = [...samples[index]].sort((a, b) => a - b)
    const spread = `${sorted[0].toFixed(2)}–${sorted[sorted.length - 1].toFixed(2)}`
    console.log(
      `${`${label}, ${name}`.padEnd(60)} median ${medians[index].toFixed(2)} µs/item  (min–max ${spread}, ${ROUNDS} interleaved rounds; CPU ${cpuMedians[index].toFixed(2)} µs/item)`,
    )
  })
  const ratio = (i) => `${(medians[i] / medians[0]).toFixed(2)}× wall, ${(cpuMedians[i] / cpuMedians[0]).toFixed(2)}× CPU`
  console.log(`${"  recording / no journal".padEnd(60)} ${ratio(1)} (target ≤ 1.5×)`)
  console.log(`${"  replaying / no journal".padEnd(60)} ${ratio(2)} (target ≤ 0.5×)`)
}

export async function journalBenchmarks() {
  await compare("2,000 fanned-out Agents", provider)
  await compare("2,000 Agents, provider after one macrotask", ioProvider)
}
