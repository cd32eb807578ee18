// MCP descriptor mapping for ACP `session/new` (INVENTORY BA-0 "MCP descriptor mapping",
// MCP-2 "Built-in ACP profiles"): configured servers become ACP `McpServer` objects, named
// servers must be vouched for by the profile and get no descriptor.

/** ACP `{ name, value }` pairs of a frozen string record, in its key order. */
function pairs(record) {
  return Object.entries(record ?? {}).map(([name, value]) => ({ name, value }))
}

/**
 * ACP descriptors for `request.mcpServers`. `providerName` names the profile in the
 * named-server TypeError; `supportsNamed` is the profile's optional check.
 */
export function acpMcpServers(mcpServers, providerName, supportsNamed) {
  const out = []
  for (const server of mcpServers) {
    if (server.kind === "named") {
      if (supportsNamed === undefined || supportsNamed(server.name) !== true) {
        throw new TypeError(`Agent provider "${providerName}" cannot verify named MCP server "${server.name}"`)
      }
      continue
    }
    const { name, transport } = server.definition
    if (transport.type === "stdio") {
      if (transport.cwd !== undefined) {
        throw new TypeError(
          `ACP stdio MCP server "${name}" cannot preserve its configured cwd because ACP has no stdio cwd field`,
        )
      }
      out.push({ name, command: transport.command, args: [...(transport.args ?? [])], env: pairs(transport.env) })
    } else {
      out.push({ type: "http", name, url: transport.url, headers: pairs(transport.headers) })
    }
  }
  return Object.freeze(out.map((descriptor) => Object.freeze(descriptor)))
}
