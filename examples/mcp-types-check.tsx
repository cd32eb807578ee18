// Compile-time checks of the MCP types (MCP-1, MCP-2, AG-4), run by `npm run test:types`.
// Every `@ts-expect-error` line must be an error. Nothing here evaluates a primitive, and
// defineMcpServer() performs no I/O, so importing the file is harmless.

import {
  Agent,
  defineMcpServer,
  Mcp,
  type AgentMcpServer,
  type AgentRequest,
  type AmlMcpServer,
  type AmlMcpTransport,
  type DefineMcpServerOptions,
  type McpProps,
} from "@aml-jsx/sdk"

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expectType<Condition extends true>(): void {}

const local = defineMcpServer({
  name: "project",
  transport: { args: ["--root", "/workspace"], command: "project-mcp", cwd: "/workspace", env: { LOG_LEVEL: "warn" }, type: "stdio" },
})
const remote = defineMcpServer({
  name: "billing",
  transport: { headers: { Authorization: "Bearer t" }, type: "streamable-http", url: new URL("https://billing.example.com/mcp") },
})
expectType<Equal<typeof local, Readonly<AmlMcpServer>>>()
expectType<Equal<typeof remote.transport, AmlMcpTransport>>()
if (remote.transport.type === "streamable-http") {
  // A URL given at definition time is text in the descriptor.
  expectType<Equal<typeof remote.transport.url, string>>()
}

const options: DefineMcpServerOptions = { name: "docs", transport: { type: "streamable-http", url: "https://x.test/mcp" } }
defineMcpServer(options)
// @ts-expect-error the transport type is a closed union
defineMcpServer({ name: "docs", transport: { type: "sse", url: "https://x.test/mcp" } })
// @ts-expect-error a stdio transport needs a command
defineMcpServer({ name: "docs", transport: { type: "stdio" } })

export const granted = (
  <Agent>
    <Mcp use={local} />
    <Mcp name="provider-native" />
    Work.
  </Agent>
)
// @ts-expect-error exactly one of name or use
export const both = <Mcp name="x" use={local} />
// @ts-expect-error exactly one of name or use
export const neither = <Mcp />

const props: McpProps = { use: remote }
void props

declare const request: AgentRequest
for (const server of request.mcpServers) {
  expectType<Equal<typeof server, AgentMcpServer>>()
  if (server.kind === "configured") expectType<Equal<typeof server.definition, AmlMcpServer>>()
  else expectType<Equal<typeof server.name, string>>()
}
