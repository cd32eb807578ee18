// ACP session updates: one session receiving 10,000 `session/update` message chunks from the
// scripted agent (__test__/fixtures/acp-scripted-agent.mjs, on @agentclientprotocol/sdk).
// The agent's own cost (the SDK serialising each notification) is not ours, so the number
// that matters is this process's CPU time (JS thread and the Rust reader threads together)
// per update: CPU(turn with 10,000 chunks) − CPU(turn with none), over 10,000. Wall time per
// update is printed too; it is bounded below by how fast the agent writes.
// Standalone: `node bench/acp.js`; also exported for bench/run.js.
import { fileURLToPath } from "node:url"

import { Agent, AmlRuntime, defineAcpAgentProvider } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { bridgeBenchmarks } from "./acp-bridge.js"

const UPDATES = 10_000
const ROUNDS = 7
const agent = fileURLToPath(new URL("../__test__/fixtures/acp-scripted-agent.mjs", import.meta.url))

const provider = defineAcpAgentProvider({
  createLaunch: () => ({ args: [agent], command: process.execPath, permissionPolicy: "reject_once" }),
  name: "bench-acp",
  workingDirectory: undefined,
})

function cpuMicros() {
  const { system, user } = process.cpuUsage()
  return system + user
}

async function sample(runtime, prompt) {
  const cpu = cpuMicros()
  const wall = performance.now()
  const text = await runtime.evaluate(jsx(Agent, { children: prompt }))
  return { cpu: cpuMicros() - cpu, text, wall: (performance.now() - wall) * 1000 }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function measureUpdates(label, runtime) {
  await sample(runtime, `flood:${UPDATES}`)
  const cpu = []
  const wall = []
  for (let i = 0; i < ROUNDS; i++) {
    const base = await sample(runtime, "flood:0")
    const full = await sample(runtime, `flood:${UPDATES}`)
    if (full.text.length !== UPDATES) throw new Error(`expected ${UPDATES} chunks, got ${full.text.length}`)
    cpu.push((full.cpu - base.cpu) / UPDATES)
    wall.push((full.wall - base.wall) / UPDATES)
  }
  const rss = (process.resourceUsage().maxRSS / 1024).toFixed(0)
  console.log(
    `${label.padEnd(48)} median ${median(cpu).toFixed(2)} µs CPU/update, ${median(wall).toFixed(2)} µs wall/update  (${ROUNDS} rounds × ${UPDATES} updates, peak RSS ${rss} MiB)`,
  )
}

export async function acpBenchmarks() {
  await bridgeBenchmarks()
  await measureUpdates("ACP session updates, untraced", new AmlRuntime({ agentProvider: provider }))
  const traced = new AmlRuntime({ agentProvider: provider })
  traced.on("trace", () => {})
  await measureUpdates("ACP session updates, metadata trace listener", traced)
  const content = new AmlRuntime({ agentProvider: provider })
  const sink = () => {}
  sink.captureContent = true
  content.on("trace", sink)
  await measureUpdates("ACP session updates, content trace listener", content)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`node ${process.version}, ${process.platform}-${process.arch}`)
  await acpBenchmarks()
}
