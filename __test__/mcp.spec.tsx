// <Mcp> grants (INVENTORY MCP-2, RT-1 allowedMcpServers, AG-4 request.mcpServers, §2.3–2.5):
// the documented examples, the request shape, scoping, and every error (the provider never
// runs). defineMcpServer() is covered by mcp-define.spec.ts; capability.mcp events and the
// registry across physical copies by mcp-trace.spec.tsx.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Mcp, System, Tool, defineMcpServer, defineTool, evaluate } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { anything, expectError, failureOf } from "./support/schemas.js"

const documentation = defineMcpServer({
  name: "documentation",
  transport: { type: "streamable-http", url: "https://mcp.example.com/docs" },
})
const SECRET = "Bearer s3cr3t-token"
const local = defineMcpServer({
  name: "local-tools",
  transport: { args: ["--project", "/absolute/project"], command: "my-mcp-server", env: { MCP_LOG_LEVEL: "warn", TOKEN: SECRET }, type: "stdio" },
})
const remote = defineMcpServer({
  name: "remote-tools",
  transport: { headers: { Authorization: SECRET }, type: "streamable-http", url: "https://mcp.example.invalid/mcp" },
})

const recorder = () => new DeterministicAgentProvider()

describe("documented examples", () => {
  it("reference: <Mcp use> gives the provider the exact descriptor", async () => {
    const provider = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const text = await runtime.evaluate(
      <Agent>
        <Mcp use={documentation} />
        Find the relevant API contract.
      </Agent>,
    )
    expect(text).toBe("Find the relevant API contract.")
    const [entry] = provider.calls[0].request.mcpServers as any[]
    expect(entry).toEqual({ definition: documentation, kind: "configured" })
    expect(Object.keys(entry)).toEqual(["kind", "definition"])
    expect(entry.definition).toBe(documentation)
  })

  it("cookbook: the capability is scoped to its Agent, siblings stay isolated", async () => {
    const projectServer = defineMcpServer({ name: "project", transport: { type: "streamable-http", url: "https://example.com/mcp" } })
    const provider = new DeterministicAgentProvider({
      respond(request) {
        if (request.prompt === "Inspect the project.") {
          return { text: request.mcpServers.length === 1 ? "MCP attached." : "MCP missing." }
        }
        return { text: request.mcpServers.length === 0 ? "Sibling isolated." : "MCP leaked." }
      },
    })
    const workflow = (
      <>
        <Agent provider={provider}>
          <Mcp use={projectServer} />
          Inspect the project.
        </Agent>
        <Agent provider={provider}>Summarize without capabilities.</Agent>
      </>
    )
    // The page prints "MCP attached. Sibling isolated.", but JSX drops the line break between
    // the two Agents and AML concatenates siblings with no separator (INVENTORY §1.1), so the
    // evaluated text has no space. The capability scoping the page demonstrates holds.
    expect(await new AmlRuntime().evaluate(workflow)).toBe("MCP attached.Sibling isolated.")
  })

  it("tool-or-mcp: an allowlisted billing server, with a deterministic provider standing in for OpenCode", async () => {
    const billing = defineMcpServer({
      name: "billing",
      transport: { headers: { Authorization: SECRET }, type: "streamable-http", url: "https://billing-mcp.example.invalid/mcp" },
    })
    const provider = new DeterministicAgentProvider({
      respond: (request) => ({ text: request.mcpServers.map((s: any) => `${s.kind}:${s.definition.name}`).join() }),
    })
    const result = await new AmlRuntime({ agentProvider: provider, allowedMcpServers: ["billing"] }).evaluate(
      <Agent system="Use billing only to inspect the account and never mutate invoices.">
        <Mcp use={billing} />
        Inspect the account's outstanding invoices and summarize them.
      </Agent>,
    )
    expect(result).toBe("configured:billing")
    expect(provider.calls[0].request.system).toBe("Use billing only to inspect the account and never mutate invoices.")
  })

  it("reference: a provider-native server by name", async () => {
    const provider = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Mcp name="server-name" />
        Use it.
      </Agent>,
    )
    const [entry] = provider.calls[0].request.mcpServers as any[]
    expect(entry).toEqual({ kind: "named", name: "server-name" })
    expect(Object.keys(entry)).toEqual(["kind", "name"])
  })
})

describe("request.mcpServers (AG-4)", () => {
  it("lists every grant in authored order, deeply frozen, next to Tools", async () => {
    const provider = recorder()
    const search = defineTool({ description: "Search", execute: () => "ok", input: anything, name: "search" })
    function Capabilities() {
      return [<Mcp use={remote} />, <Tool use={search} />]
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Mcp name="git" />
        <Capabilities />
        Work.
        <Mcp use={local} />
      </Agent>,
    )
    const request = provider.calls[0].request as any
    expect(request.prompt).toBe("Work.")
    expect(request.mcpServers.map((s: any) => s.name ?? s.definition.name)).toEqual(["git", "remote-tools", "local-tools"])
    expect(request.mcpServers[1].definition).toBe(remote)
    expect(request.tools.map((t: any) => t.name)).toEqual(["search"])
    for (const value of [request.mcpServers, ...request.mcpServers, remote.transport, (local.transport as any).env]) {
      expect(Object.isFrozen(value)).toBe(true)
    }
  })

  it("is not inherited by child Agents and works inside component-local evaluate()", async () => {
    const provider = new DeterministicAgentProvider({
      respond: (request) => ({ text: `${request.prompt}=${request.mcpServers.length}` }),
    })
    async function Nested() {
      return await evaluate(
        <Agent>
          <Mcp name="inner" />
          <Mcp use={documentation} />
          nested
        </Agent>,
      )
    }
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Mcp name="outer" />
        <Agent>child</Agent>
        <Nested />
      </Agent>,
    )
    expect(text).toBe("child=0nested=2=1")
  })

  it("allows a listed name and is independent of allowedTools", async () => {
    const provider = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider, allowedMcpServers: ["documentation", "git"], allowedTools: [] })
    await runtime.evaluate(
      <Agent>
        <Mcp use={documentation} />
        <Mcp name="git" />
        ok
      </Agent>,
    )
    expect(provider.calls[0].request.mcpServers).toHaveLength(2)
  })
})

describe("errors (MCP-2): documented message, and the provider never runs", () => {
  const fails = async (tree: unknown, message: string, options: object = {}) => {
    const provider = recorder()
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider, ...options }).evaluate(tree as never))
    expectError(error, EvaluationError, message)
    expect(provider.calls).toHaveLength(0)
  }
  // The sibling Agent after the failing one must never be reached either.
  const inAgent = (props: object) => (
    <>
      <Agent>
        {jsx(Mcp as never, props)}
        prompt
      </Agent>
      <Agent>after</Agent>
    </>
  )

  it("rejects children", async () => {
    await fails(inAgent({ children: "child", use: documentation }), "<Mcp> does not accept children")
    await fails(inAgent({ children: [], name: "git" }), "<Mcp> does not accept children")
  })

  it("requires exactly one of name or use", async () => {
    const message = "<Mcp> requires exactly one of name or use"
    await fails(inAgent({}), message)
    await fails(inAgent({ name: undefined, use: undefined }), message)
    await fails(inAgent({ name: "documentation", use: documentation }), message)
  })

  it("checks the named form's name", async () => {
    for (const name of ["", " git", "git\n", 42, null]) {
      await fails(inAgent({ name }), "MCP server name must be a non-empty normalized string")
    }
  })

  it("accepts only the exact registered descriptor identity", async () => {
    const lookalikes = [
      { ...documentation, __amlMcpServer: true },
      structuredClone(documentation),
      new Proxy(documentation, {}),
      Object.create(documentation),
      "documentation",
      { name: "documentation", transport: documentation.transport },
      null,
    ]
    for (const use of lookalikes) await fails(inAgent({ use }), "<Mcp use> must be a defined MCP server")
  })

  it("rejects duplicate names within one Agent, whatever the form", async () => {
    const twin = defineMcpServer({ name: "documentation", transport: { command: "docs", type: "stdio" } })
    const pairs = [
      [<Mcp use={documentation} />, <Mcp use={documentation} />],
      [<Mcp use={documentation} />, <Mcp use={twin} />],
      [<Mcp name="documentation" />, <Mcp use={documentation} />],
      [<Mcp name="git" />, <Mcp name="git" />],
    ]
    for (const [first, second] of pairs) {
      const name = (second.props as any).use?.name ?? (second.props as any).name
      await fails(<Agent>{first}{second}prompt</Agent>, `Agent declares duplicate MCP server "${name}"`)
    }
  })

  it("rejects servers the runtime does not allow, before duplicates", async () => {
    await fails(inAgent({ name: "git" }), 'MCP server "git" is not allowed by this runtime', { allowedMcpServers: ["documentation"] })
    await fails(inAgent({ use: documentation }), 'MCP server "documentation" is not allowed by this runtime', { allowedMcpServers: [] })
    await fails(
      <Agent><Mcp name="git" /><Mcp name="git" /></Agent>,
      'MCP server "git" is not allowed by this runtime',
      { allowedMcpServers: [] },
    )
  })

  it("checks props before placement, and placement before the allowlist", async () => {
    await fails(<Mcp name="git" />, "<Mcp> is only valid inside <Agent>", { allowedMcpServers: [] })
    await fails(<Mcp use={documentation} />, "<Mcp> is only valid inside <Agent>")
    await fails(<Agent><System><Mcp name="git" /></System>p</Agent>, "<Mcp> is only valid inside <Agent>")
    await fails(<Agent>p<FollowUp><Mcp name="git" />more</FollowUp></Agent>, "<Mcp> is invalid inside <FollowUp>")
    await fails(<Mcp name="" />, "MCP server name must be a non-empty normalized string")
  })
})
