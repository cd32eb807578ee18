// The MCP Tool bridge (issue 10): a Tool call round trip from an MCP client over HTTP on
// 127.0.0.1 to the bridge, through the dispatcher to a JS `execute`, and back. Target ≤ 300 µs
// median on this machine.
//
// Three rows, measured round by round in rotating order so load on a shared machine hits them
// alike:
// - the bridge ACP Agents use (lib/agents/acp/loop-bridge.js, served on this thread's event loop)
//   with a minimal client (JSON-RPC `tools/call` over one keep-alive socket), so the figure
//   is the bridge's: HTTP parse, routing, JS execute, response;
// - the same client against a `node:http` server in this process doing the same JSON work:
//   the floor of one HTTP round trip on this machine, for scale;
// - the official `@modelcontextprotocol/sdk` client against the loop bridge, whose own
//   per-call work (fetch, schema validation) runs in this process too.
import { connect } from "node:net"
import { createServer } from "node:http"

import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"

import { startLoopBridge } from "../lib/agents/acp/loop-bridge.js"
import { lendTools } from "../lib/tools/native-dispatch.js"

const CALLS = 500
const ROUNDS = 9
const WARMUP = 2

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

function cpuMicros() {
  const { system, user } = process.cpuUsage()
  return system + user
}

const addTool = () => ({
  description: "add",
  execute: async ({ a, b }) => ({ sum: a + b }),
  inputSchema: { type: "object" },
  kind: "javascript",
  name: "add",
})

/** JSON-RPC `tools/call` over one keep-alive socket; one request in flight at a time. */
async function leanClient(url, authorization) {
  const { hostname, pathname, port } = new URL(url)
  const socket = connect({ host: hostname, noDelay: true, port: Number(port) })
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject))
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
  const head = `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`
  const call = (a) =>
    new Promise((resolve) => {
      pending = resolve
      const body = JSON.stringify({ id: ++id, jsonrpc: "2.0", method: "tools/call", params: { arguments: { a, b: 1 }, name: "add" } })
      socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    })
  return { call, close: () => socket.destroy() }
}

/** A lean client on a bridge serving one `add` Tool, checked once before timing. */
async function leanTarget(descriptor, stop, label) {
  const client = await leanClient(descriptor.url, descriptor.headers.find((h) => h.name === "Authorization").value)
  const first = JSON.parse(await client.call(1))
  if (first.result?.content?.[0]?.text !== '{"sum":2}') throw new Error(`unexpected bridge answer ${JSON.stringify(first)}`)
  return {
    call: client.call,
    close() {
      client.close()
      stop()
    },
    label,
  }
}

/** The bridge ACP Agents use: served on this thread's event loop (lib/agents/acp/loop-bridge.js). */
async function bridgeTarget() {
  const lent = lendTools([addTool()], new AbortController().signal)
  const bridge = await startLoopBridge(lent.json)
  const stop = () => {
    bridge.stop()
    lent.release()
  }
  return leanTarget(bridge.descriptor, stop, "bridge, lean JSON-RPC client")
}

/** A `node:http` server answering `tools/call` as the bridge does, in this process. */
async function nodeHttpTarget() {
  const tool = addTool()
  const server = createServer((request, response) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk) => (text += chunk))
    request.on("end", async () => {
      const message = JSON.parse(text)
      const value = await tool.execute(message.params.arguments, {})
      const body = JSON.stringify({ id: message.id, jsonrpc: "2.0", result: { content: [{ text: JSON.stringify(value), type: "text" }] } })
      response.writeHead(200, { "Content-Length": Buffer.byteLength(body), "Content-Type": "application/json" })
      response.end(body)
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const client = await leanClient(`http://127.0.0.1:${server.address().port}/mcp`, "Bearer x")
  return {
    call: client.call,
    close() {
      client.close()
      server.close()
    },
    label: "reference: node:http, same client",
  }
}

/**
 * The SDK's transport passes one shared AbortSignal to every fetch, and undici leaves a
 * listener on it per request until the response is collected, so thousands of calls trip
 * MaxListenersExceededWarning (the SDK's behaviour, not the bridge's). A private signal per
 * request, linked to the shared one, keeps the bench's output clean; the responses here are
 * single JSON bodies, so unlinking once the response arrives loses nothing.
 */
function isolatingFetch(url, init = {}) {
  const outer = init.signal
  if (!outer) return fetch(url, init)
  const controller = new AbortController()
  const forward = () => controller.abort(outer.reason)
  if (outer.aborted) forward()
  else outer.addEventListener("abort", forward, { once: true })
  return fetch(url, { ...init, signal: controller.signal }).finally(() => outer.removeEventListener("abort", forward))
}

async function sdkTarget() {
  const lent = lendTools([addTool()], new AbortController().signal)
  const bridge = await startLoopBridge(lent.json)
  const { headers, url } = bridge.descriptor
  const client = new Client({ name: "bench", version: "1.0.0" })
  const requestInit = { headers: Object.fromEntries(headers.map((h) => [h.name, h.value])) }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: isolatingFetch, requestInit }))
  return {
    call: (a) => client.callTool({ arguments: { a, b: 1 }, name: "add" }),
    async close() {
      await client.close()
      bridge.stop()
      lent.release()
    },
    label: "bridge, official MCP SDK client",
  }
}

export async function bridgeBenchmarks() {
  const targets = [await bridgeTarget(), await nodeHttpTarget(), await sdkTarget()]
  const wall = targets.map(() => [])
  const cpu = targets.map(() => [])
  try {
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (let k = 0; k < targets.length; k++) {
        const index = (round + k) % targets.length
        const { call } = targets[index]
        const started = performance.now()
        const used = cpuMicros()
        for (let i = 0; i < CALLS; i++) await call(i)
        if (round < WARMUP) continue
        wall[index].push(((performance.now() - started) * 1000) / CALLS)
        cpu[index].push((cpuMicros() - used) / CALLS)
      }
    }
  } finally {
    for (const target of targets) await target.close()
  }
  targets.forEach(({ label }, index) => {
    const sorted = [...wall[index]].sort((a, b) => a - b)
    console.log(
      `${`${CALLS} Tool calls, ${label}`.padEnd(60)} median ${median(wall[index]).toFixed(1)} µs/call  (min–max ${sorted[0].toFixed(1)}–${sorted[sorted.length - 1].toFixed(1)}, ${ROUNDS} interleaved rounds; process CPU ${median(cpu[index]).toFixed(1)} µs/call)`,
    )
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`node ${process.version}, ${process.platform}-${process.arch}`)
  await bridgeBenchmarks()
}
