// MCP grants seen from outside the request (INVENTORY §2.3–2.5, RT-4): capability.mcp point
// events carry only kind and name, never transport configuration, whoever listens; and
// descriptors from two physical copies of the package are accepted by each other's runtime.
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { afterAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, Mcp, Tool, defineMcpServer, defineTool } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

import { anything } from "./support/schemas.js"

const SECRET = "Bearer s3cr3t-token"
const local = defineMcpServer({
  name: "local-tools",
  transport: { args: ["--project", "/absolute/project"], command: "my-mcp-server", env: { MCP_LOG_LEVEL: "warn", TOKEN: SECRET }, type: "stdio" },
})
const remote = defineMcpServer({
  name: "remote-tools",
  transport: { headers: { Authorization: SECRET }, type: "streamable-http", url: "https://mcp.example.invalid/mcp" },
})
const documentation = defineMcpServer({
  name: "documentation",
  transport: { type: "streamable-http", url: "https://mcp.example.com/docs" },
})

const recorder = () => new DeterministicAgentProvider()

describe("capability.mcp events (§2.3–2.5)", () => {
  const run = async (captureContent: boolean) => {
    const events: any[] = []
    const seenAtCall: number[] = []
    const provider = new DeterministicAgentProvider({
      respond: () => {
        seenAtCall.push(events.filter((e) => e.name === "capability.mcp").length)
        return { text: "done" }
      },
    })
    const runtime = new AmlRuntime({ agentProvider: provider })
    runtime.on("trace", Object.assign((event: any) => void events.push(event), { captureContent }))
    const search = defineTool({ description: "Search", execute: () => "ok", input: anything, name: "search" })
    await runtime.evaluate(
      <Agent>
        <Mcp use={local} />
        <Tool use={search} />
        <Mcp use={remote} />
        <Mcp name="git" />
        prompt
      </Agent>,
    )
    return { events, seenAtCall }
  }

  for (const captureContent of [false, true]) {
    it(`carry only kind and name, before the provider runs (captureContent: ${captureContent})`, async () => {
      const { events, seenAtCall } = await run(captureContent)
      expect(seenAtCall).toEqual([3])
      const points = events.filter((e) => e.type === "event")
      expect(points.map((e) => e.name)).toEqual(["capability.tool", "capability.mcp", "capability.mcp", "capability.mcp"])
      const agentStart = events.find((e) => e.type === "span.start" && e.kind === "agent")
      const mcp = points.slice(1)
      expect(mcp.map((e) => ({ ...e.attributes }))).toEqual([
        { kind: "stdio", name: "local-tools" },
        { kind: "streamable-http", name: "remote-tools" },
        { kind: "named", name: "git" },
      ])
      for (const event of mcp) {
        expect(event.spanId).toBe(agentStart.spanId)
        expect(Object.isFrozen(event.attributes)).toBe(true)
      }
      const end = events.find((e) => e.type === "span.end" && e.kind === "agent")
      expect(end.attributes.mcpServers).toBe(3)
      expect(end.attributes.tools).toBe(1)
      // Transport configuration never reaches any event, content-capturing or not.
      const everything = JSON.stringify(events)
      for (const secret of [SECRET, "my-mcp-server", "/absolute/project", "MCP_LOG_LEVEL", "mcp.example.invalid"]) {
        expect(everything).not.toContain(secret)
      }
    })
  }
})

describe("cross-copy registry (RT-4)", () => {
  const root = fileURLToPath(new URL("..", import.meta.url))
  const copyDir = mkdtempSync(join(tmpdir(), "aml-sdk-mcp-copy-"))
  afterAll(() => rmSync(copyDir, { force: true, recursive: true }))

  it("descriptors from either physical copy are accepted by the other", async () => {
    for (const entry of ["index.js", "package.json", "lib", "jsx-runtime"]) {
      cpSync(join(root, entry), join(copyDir, entry), { recursive: true })
    }
    cpSync(join(root, "native"), join(copyDir, "native"), { filter: (source) => !/\.d\.ts$/.test(source), recursive: true })
    const copy = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "index.js")).href)
    const copyJsx = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "jsx-runtime", "index.js")).href)
    expect(copy.defineMcpServer).not.toBe(defineMcpServer)
    const fromCopy = copy.defineMcpServer({ name: "copy-server", transport: { command: "srv", type: "stdio" } })
    const provider = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Mcp use={fromCopy} />
        <Mcp use={documentation} />
        p
      </Agent>,
    )
    expect(provider.calls[0].request.mcpServers.map((s: any) => s.definition)).toEqual([fromCopy, documentation])
    // The copy's runtime and primitives accept this copy's descriptor too.
    const copyProvider = recorder()
    const tree = copyJsx.jsx(copy.Agent, { children: [copyJsx.jsx(copy.Mcp, { use: documentation }), "q"] })
    await new copy.AmlRuntime({ agentProvider: copyProvider }).evaluate(tree)
    expect((copyProvider.calls[0].request.mcpServers[0] as any).definition).toBe(documentation)
  })
})
