// ACP session updates: one session receiving 10,000 `session/update` message chunks from the
// scripted agent (__test__/fixtures/acp-scripted-agent.mjs, on @agentclientprotocol/sdk).
// The agent's own cost (the SDK serialising each notification) is not ours, so the number
// that matters is this process's CPU time (JS thread and the Rust reader threads together)
// per update: CPU(turn with 10,000 chunks) − CPU(turn with none), over 10,000. Wall time per
// update is printed too; it is bounded below by how fast the agent writes.
// Standalone: `node bench/acp.js`; also exported for bench/run.js.
import { fileURLToPath } from "node:url"

import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"

import { Agent, AmlRuntime, defineAcpAgentProvider } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { acpBridgeStart, acpBridgeStop } from "../lib/native.js"
import { lendTools } from "../lib/native-tool-dispatch.js"

import { measure } from "./harness.js"

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

const BRIDGE_CALLS = 500

/** MCP client → bridge (HTTP on 127.0.0.1) → dispatcher → JS execute → back, sequentially. */
async function bridgeRoundTrips() {
  const tool = { description: "add", execute: async ({ a, b }) => ({ sum: a + b }), inputSchema: { type: "object" }, kind: "javascript", name: "add" }
  const lent = lendTools([tool], new AbortController().signal)
  const bridge = await acpBridgeStart(lent.json)
  const { headers, url } = JSON.parse(bridge.descriptor)
  const client = new Client({ name: "bench", version: "1.0.0" })
  const requestInit = { headers: Object.fromEntries(headers.map((h) => [h.name, h.value])) }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }))
  try {
    await measure(`${BRIDGE_CALLS} bridge Tool calls (MCP client → JS execute)`, {
      items: BRIDGE_CALLS,
      rounds: 7,
      run: async () => {
        for (let i = 0; i < BRIDGE_CALLS; i++) await client.callTool({ arguments: { a: i, b: 1 }, name: "add" })
      },
      warmup: 2,
    })
  } finally {
    await client.close()
    acpBridgeStop(bridge.handle)
    lent.release()
  }
}

/**
 * The same round trip from a minimal MCP client: JSON-RPC `tools/call` over one keep-alive
 * socket, so the figure is the bridge's (HTTP parse, dispatcher hop, JS execute, response)
 * rather than the official SDK client's own per-call work, which runs in this process too.
 */
async function leanBridgeRoundTrips() {
  const { connect } = await import("node:net")
  const tool = { description: "add", execute: async ({ a, b }) => ({ sum: a + b }), inputSchema: { type: "object" }, kind: "javascript", name: "add" }
  const lent = lendTools([tool], new AbortController().signal)
  const bridge = await acpBridgeStart(lent.json)
  const { headers, url } = JSON.parse(bridge.descriptor)
  const { hostname, pathname, port } = new URL(url)
  const auth = headers.find((h) => h.name === "Authorization").value
  const socket = connect({ host: hostname, noDelay: true, port: Number(port) })
  await new Promise((resolve) => socket.once("connect", resolve))
  let pending
  let buffered = ""
  socket.setEncoding("utf8")
  socket.on("data", (data) => {
    buffered += data
    const end = buffered.indexOf("\r\n\r\n")
    if (end < 0) return
    const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, end))[1])
    if (buffered.length < end + 4 + length) return
    const body = buffered.slice(end + 4, end + 4 + length)
    buffered = buffered.slice(end + 4 + length)
    pending(body)
  })
  let id = 0
  const call = (a) =>
    new Promise((resolve) => {
      pending = resolve
      const body = JSON.stringify({ id: ++id, jsonrpc: "2.0", method: "tools/call", params: { arguments: { a, b: 1 }, name: "add" } })
      socket.write(
        `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
    })
  const first = JSON.parse(await call(1))
  if (first.result?.content?.[0]?.text !== '{"sum":2}') throw new Error(`unexpected bridge answer ${JSON.stringify(first)}`)
  const cpu = []
  try {
    await measure(`${BRIDGE_CALLS} bridge Tool calls (lean JSON-RPC client)`, {
      items: BRIDGE_CALLS,
      rounds: 7,
      run: async () => {
        const before = cpuMicros()
        for (let i = 0; i < BRIDGE_CALLS; i++) await call(i)
        cpu.push((cpuMicros() - before) / BRIDGE_CALLS)
      },
      warmup: 2,
    })
    console.log(`${"  (this process's CPU per lean call)".padEnd(48)} median ${median(cpu).toFixed(2)} µs CPU/call`)
  } finally {
    socket.destroy()
    acpBridgeStop(bridge.handle)
    lent.release()
  }
}

export async function acpBenchmarks() {
  await bridgeRoundTrips()
  await leanBridgeRoundTrips()
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
