// Request digests for the evaluation journal (docs/JOURNAL.md): a step is replayed only
// when the request it would make now is the request whose answer was recorded.

import { createHash } from "node:crypto"

function digest(parts) {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url")
}

/**
 * An Agent request: provider name, model, prompt, system, follow-ups, the granted Tools'
 * names and input schemas, MCP server names, Skill names and the output schema.
 */
export function agentDigest(providerName, request) {
  return digest([
    "agent",
    providerName,
    request.model ?? null,
    request.prompt,
    request.system,
    request.followUps ?? [],
    request.tools.map((tool) => [tool.name, tool.inputSchema ?? null]),
    request.mcpServers.map((server) => server.name),
    request.skills?.map((skill) => skill.name) ?? [],
    request.output ?? null,
  ])
}

/** A callable Tool call: the Tool's name and input schema and the input snapshot. */
export function toolDigest(port, snapshot) {
  return digest(["tool", port.name, port.inputSchema ?? null, snapshot])
}
