// The ACP MCP Tool bridge (INVENTORY BA-0 "MCP bridge"): a Streamable-HTTP MCP server on
// 127.0.0.1 serving an Agent's JS Tools through the native dispatcher, exercised with the
// official @modelcontextprotocol/sdk client — directly, and from inside a scripted ACP agent.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { connect } from "node:net"

import { describe, expect, it, vi } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Tool, defineTool } from "@aml-jsx/sdk"

import { startLoopBridge } from "../lib/agents/acp/loop-bridge.js"
import { liveAcpBridges } from "../lib/core/native.js"
import { lendTools, liveNativeTools } from "../lib/tools/native-dispatch.js"
import { scriptedAcp } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

const add = defineTool({
  description: "Add two numbers",
  execute: ({ a, b }: { a: number; b: number }) => ({ sum: a + b }),
  input: z.object({ a: z.number(), b: z.number() }),
  name: "add",
})
const greet = defineTool({
  description: "Greets",
  execute: ({ who }: { who: string }) => `hello ${who}`,
  input: z.object({ who: z.string() }),
  name: "greet",
})
const fail = defineTool({
  description: "Always fails",
  execute: () => {
    throw new Error("the Tool broke")
  },
  input: z.object({}),
  name: "fail",
})

/**
 * A bridge over plain lent Tools (no Agent), for the protocol rules: the bridge ACP Agents
 * get, served on the JS thread's event loop (lib/agents/acp/loop-bridge.js).
 */
async function bridgeOf(tools: any[]) {
  const lent = lendTools(tools, new AbortController().signal)
  const bridge = await startLoopBridge(lent.json)
  return {
    descriptor: bridge.descriptor,
    info: { handle: bridge.handle, name: bridge.name },
    stop() {
      bridge.stop()
      lent.release()
    },
  }
}

const wrapper = (name: string, execute: (input: any) => unknown) => ({
  description: `${name} tool`,
  execute: async (input: any) => execute(input),
  inputSchema: { properties: {}, type: "object" },
  kind: "javascript",
  name,
})

describe("bridge protocol", () => {
  // Output text is JSON.stringify of the executor's value (key order kept).
  it("serves tools/list and tools/call to the official MCP client", async () => {
    const bridge = await bridgeOf([wrapper("echo", (input) => input), wrapper("text", () => "plain"), wrapper("boom", () => { throw new TypeError("bad input") })])
    const headers = Object.fromEntries(bridge.descriptor.headers.map((h: any) => [h.name, h.value]))
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(bridge.descriptor.url), { requestInit: { headers } }))
    try {
      const { tools } = await client.listTools()
      expect(tools).toEqual([
        { description: "echo tool", inputSchema: { properties: {}, type: "object" }, name: "echo" },
        { description: "text tool", inputSchema: { properties: {}, type: "object" }, name: "text" },
        { description: "boom tool", inputSchema: { properties: {}, type: "object" }, name: "boom" },
      ])
      expect(await client.callTool({ arguments: { b: 1, a: [2] }, name: "echo" })).toEqual({ content: [{ text: '{"b":1,"a":[2]}', type: "text" }] })
      expect(await client.callTool({ arguments: {}, name: "text" })).toEqual({ content: [{ text: "plain", type: "text" }] })
      expect(await client.callTool({ arguments: {}, name: "boom" })).toEqual({ content: [{ text: "bad input", type: "text" }], isError: true })
      expect(await client.callTool({ arguments: {}, name: "nope" })).toEqual({ content: [{ text: 'Unknown AML Tool "nope"', type: "text" }], isError: true })
    } finally {
      await client.close()
      bridge.stop()
    }
    expect(liveAcpBridges()).toBe(0)
  })

  it("answers a wrong path or token with 404 and other methods with 405", async () => {
    const bridge = await bridgeOf([wrapper("echo", (input) => input)])
    const url = bridge.descriptor.url
    const auth = bridge.descriptor.headers[0].value
    expect(bridge.descriptor).toEqual({ headers: [{ name: "Authorization", value: auth }], name: bridge.info.name, type: "http", url })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(bridge.info.name).toMatch(/^aml_[0-9a-f]{32}$/)
    expect(auth).toMatch(/^Bearer [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const post = (target: string, authorization?: string) =>
      fetch(target, {
        body: JSON.stringify({ id: 1, jsonrpc: "2.0", method: "tools/list" }),
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        method: "POST",
      })
    try {
      expect((await post(url)).status).toBe(404)
      expect((await post(url, "Bearer nope")).status).toBe(404)
      expect((await post(url.replace("/mcp", "/other"), auth)).status).toBe(404)
      expect((await fetch(url, { headers: { authorization: auth } })).status).toBe(405)
      expect((await fetch(url, { headers: { authorization: auth }, method: "DELETE" })).status).toBe(405)
      expect((await post(url, auth)).status).toBe(200)
      // A client with the wrong token cannot even initialize.
      const client = new Client({ name: "intruder", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer wrong" } } })
      const error = await rejection(client.connect(transport))
      expect(error.code).toBe(404)
    } finally {
      bridge.stop()
    }
    const refused = await fetch(url, { method: "POST" }).then(
      () => "answered",
      () => "refused",
    )
    expect(refused).toBe("refused")
  })
})

describe("Tools through an ACP agent", () => {
  it("an agent calls a JS Tool through the bridge with the official MCP client", async () => {
    const { contexts, provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    const text = await runtime.evaluate(
      <Agent>
        <Tool use={add} />
        <Tool use={greet} />
        {'call-tool add {"a":2,"b":40}'}
      </Agent>,
    )
    expect(JSON.parse(text)).toEqual({ result: { content: [{ text: '{"sum":42}', type: "text" }] }, tools: ["add", "greet"] })
    const [ctx] = contexts
    expect(ctx.amlMcpServerName).toMatch(/^aml_[0-9a-f]{32}$/)
    expect(ctx.mcpServers.map((server: any) => server.name)).toEqual([ctx.amlMcpServerName])
    // The call ran the real wrapper: a tool span under the Agent.
    expect(events.filter((e) => e.type === "span.start" && e.kind === "tool").map((e) => e.name)).toEqual(["add"])
    expect(liveAcpBridges()).toBe(0)
    expect(liveNativeTools()).toEqual({ calls: 0, tools: 0 })
  })

  it("hands input validation and executor failures to the agent as isError results", async () => {
    const { provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
    const runtime = new AmlRuntime({ agentProvider: provider })
    const invalid = JSON.parse(await runtime.evaluate(<Agent><Tool use={add} />{'call-tool add {"a":"two"}'}</Agent>))
    expect(invalid.result.isError).toBe(true)
    expect(invalid.result.content[0].text).toMatch(/add/)
    const failed = JSON.parse(await runtime.evaluate(<Agent><Tool use={fail} />{"call-tool fail {}"}</Agent>))
    expect(failed.result).toEqual({ content: [{ text: "the Tool broke", type: "text" }], isError: true })
  })

  it("requires HTTP MCP support from the agent for the bridge", async () => {
    const { provider } = scriptedAcp()
    const error = await rejection(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={add} />x</Agent>))
    expect(error.cause.message).toMatch(/^ACP Agent does not advertise HTTP MCP support required by server "aml_[0-9a-f]{32}"$/)
    expect(liveAcpBridges()).toBe(0)
  })

  it("reserves aml_submit_result and refuses names MCP cannot carry", async () => {
    const reserved = defineTool({ description: "d", execute: () => 1, input: z.object({}), name: "aml_submit_result" })
    const spaced = defineTool({ description: "d", execute: () => 1, input: z.object({}), name: "look up" })
    const { contexts, provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
    const runtime = new AmlRuntime({ agentProvider: provider })
    const first = await rejection(runtime.evaluate(<Agent><Tool use={reserved} />x</Agent>))
    expect(first.cause.constructor).toBe(TypeError)
    expect(first.cause.message).toBe('AML JavaScript Tool name "aml_submit_result" is reserved')
    const second = await rejection(runtime.evaluate(<Agent><Tool use={spaced} />x</Agent>))
    expect(second.cause.constructor).toBe(TypeError)
    expect(second.cause.message).toBe(
      'AML Tool "look up" cannot be served over MCP: its name must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "-" and "."',
    )
    expect(contexts).toEqual([])
  })
})

describe("the bridge served on the event loop", () => {
  // Bounds for a loaded 2-core machine, never margins: each wait ends as soon as it holds.
  const eventually = (check: () => void) => vi.waitFor(check, { interval: 5, timeout: 20_000 })

  /** A raw keep-alive socket to `descriptor`: send bytes, read whole responses. */
  async function rawClient(descriptor: any) {
    const { hostname, port } = new URL(descriptor.url)
    const socket = connect({ host: hostname, port: Number(port) })
    await new Promise((resolve) => socket.once("connect", resolve))
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (data) => (received += data))
    const closed = new Promise((resolve) => socket.once("close", resolve))
    const request = (body: unknown) => {
      const text = JSON.stringify(body)
      return `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: ${descriptor.headers[0].value}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
    }
    return { closed, received: () => received, request, socket }
  }

  const call = (id: number, name: string, args: unknown = {}) => ({ id, jsonrpc: "2.0", method: "tools/call", params: { arguments: args, name } })

  it("answers pipelined requests in order, each call after the one ahead of it settled", async () => {
    const order: string[] = []
    const slow = wrapper("slow", async (input) => {
      order.push(`start ${input.n}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
      order.push(`end ${input.n}`)
      return input.n
    })
    const bridge = await bridgeOf([slow])
    const client = await rawClient(bridge.descriptor)
    try {
      client.socket.write(client.request(call(1, "slow", { n: 1 })) + client.request({ id: 2, jsonrpc: "2.0", method: "ping" }) + client.request(call(3, "slow", { n: 3 })))
      await eventually(() => expect(client.received().match(/HTTP\/1\.1 200/g)?.length).toBe(3))
      const ids = [...client.received().matchAll(/"id":(\d+)/g)].map((m) => Number(m[1]))
      expect(ids).toEqual([1, 2, 3])
      expect(order).toEqual(["start 1", "end 1", "start 3", "end 3"])
    } finally {
      client.socket.destroy()
      bridge.stop()
    }
    expect(liveNativeTools()).toEqual({ calls: 0, tools: 0 })
  })

  it("stopping the bridge aborts the running call and closes its connection without an answer", async () => {
    let seen: AbortSignal | undefined
    const hang = wrapper("hang", () => new Promise(() => {}))
    hang.execute = async (_input: any, context: any) => {
      seen = context.signal
      return new Promise(() => {})
    }
    const bridge = await bridgeOf([hang])
    const client = await rawClient(bridge.descriptor)
    client.socket.write(client.request(call(1, "hang")))
    await eventually(() => expect(seen).toBeDefined())
    expect(liveAcpBridges()).toBe(1)
    bridge.stop()
    await client.closed
    expect(seen!.aborted).toBe(true)
    expect(client.received()).toBe("")
    expect(liveAcpBridges()).toBe(0)
    const refused = await fetch(bridge.descriptor.url, { method: "POST" }).then(
      () => "answered",
      () => "refused",
    )
    expect(refused).toBe("refused")
  })

  it("a client that hangs up mid-call aborts that call only", async () => {
    const signals: AbortSignal[] = []
    const hang = wrapper("hang", () => undefined)
    hang.execute = async (_input: any, context: any) => {
      signals.push(context.signal)
      return new Promise(() => {})
    }
    const bridge = await bridgeOf([hang, wrapper("echo", (input) => input)])
    const first = await rawClient(bridge.descriptor)
    const second = await rawClient(bridge.descriptor)
    try {
      first.socket.write(first.request(call(1, "hang")))
      second.socket.write(second.request(call(2, "hang")))
      await eventually(() => expect(signals).toHaveLength(2))
      first.socket.destroy()
      await eventually(() => expect(signals[0].aborted).toBe(true))
      expect(signals[1].aborted).toBe(false)
      // The bridge still serves new connections.
      const third = await rawClient(bridge.descriptor)
      third.socket.write(third.request(call(3, "echo", { x: 1 })))
      await eventually(() => expect(third.received()).toContain('{\\"x\\":1}'))
      third.socket.destroy()
    } finally {
      second.socket.destroy()
      bridge.stop()
    }
    await eventually(() => expect(signals[1].aborted).toBe(true))
  })
})
