// Request digests for the evaluation journal (docs/JOURNAL.md): a step is replayed only
// when the request it would make now is the request whose answer was recorded. The facade
// builds one canonical text (every part length-prefixed, so distinct requests never share
// a text); Rust hashes it (SHA-256, crates/aml-journal/src/digest.rs). Schemas are frozen
// snapshots reused across calls, so their JSON text is cached by identity.

import { journalDigest } from "./native.js"

const schemaTexts = new WeakMap()

function schemaText(schema) {
  if (typeof schema !== "object" || schema === null) return "null"
  let text = schemaTexts.get(schema)
  if (text === undefined) {
    text = JSON.stringify(schema) ?? "null"
    schemaTexts.set(schema, text)
  }
  return text
}

function part(text) {
  return `${text.length}:${text};`
}

/**
 * An Agent request: provider name, model, prompt, system, follow-ups, the granted Tools'
 * names and input schemas, MCP server names, Skill names and the output schema.
 */
export function agentDigest(providerName, request) {
  let text = `agent;${part(providerName)}${request.model === undefined ? "-;" : part(request.model)}`
  text += part(request.prompt) + part(request.system)
  const followUps = request.followUps ?? []
  text += `f${followUps.length};`
  for (const followUp of followUps) text += part(followUp)
  text += `t${request.tools.length};`
  for (const tool of request.tools) text += part(tool.name) + part(schemaText(tool.inputSchema))
  text += `m${request.mcpServers.length};`
  for (const server of request.mcpServers) text += part(server.name)
  const skills = request.skills ?? []
  text += `s${skills.length};`
  for (const skill of skills) text += part(String(skill.name))
  const output = request.output
  text += output === undefined ? "o-;" : `o${part(output.type)}${part(schemaText(output.jsonSchema))}`
  return journalDigest(text)
}

/** A callable Tool call: the Tool's name and input schema and the input snapshot. */
export function toolDigest(port, snapshot) {
  return journalDigest(`tool;${part(port.name)}${part(schemaText(port.inputSchema))}${part(JSON.stringify(snapshot) ?? "")}`)
}
