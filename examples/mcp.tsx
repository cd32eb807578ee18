// `aml run examples/mcp.tsx` — MCP descriptors are data: <Mcp> grants them to one Agent and
// the provider receives them in grant order. Nothing connects to these placeholders.
import { Agent, Mcp, defineMcpServer } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const files = defineMcpServer({
  name: "files",
  transport: { type: "stdio", command: "mcp-files", args: ["--read-only"] },
})
const issues = defineMcpServer({
  name: "issues",
  transport: { type: "streamable-http", url: new URL("https://mcp.example.invalid/issues") },
})

const provider = new DeterministicAgentProvider({
  name: "mcp-aware",
  respond: (request) => ({
    text: request.mcpServers
      .map((server) =>
        server.kind === "named"
          ? `${server.name} (provider-native)`
          : `${server.definition.name} via ${server.definition.transport.type}`,
      )
      .join("\n"),
  }),
})

export default (
  <Agent provider={provider}>
    <Mcp use={files} />
    <Mcp use={issues} />
    <Mcp name="browser" />
    List the MCP servers you can use.
  </Agent>
)
