// Request digests for the evaluation journal (docs/JOURNAL.md): a step is replayed only
// when the request it would make now is the request whose answer was recorded. Every part
// of a canonical text is length-prefixed, so distinct requests never share a text; Rust
// hashes it (SHA-256, crates/aml-journal/src/digest.rs). An Agent's text is mostly the
// engine's (its plan); a Tool call's is built here. Schemas are frozen snapshots reused
// across calls, so their JSON text is cached by identity.

import { journalDigest } from "../core/native.js"

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
 * The part of an Agent digest only JS holds (the engine hashes the rest from its plan:
 * provider name, model, prompt, system, follow-ups, Tool, MCP server and Skill names;
 * src/hot_path/journal.rs): the granted Tools' input schemas and the output schema. Undefined
 * when there is neither, which spares the plain Agent any JS work.
 */
export function agentExtra(domain, task, structured) {
  if (domain.tools.length === 0 && structured === undefined) return undefined
  let text = ""
  if (domain.tools.length > 0) {
    for (const ref of domain.native.agentTools(task)) {
      const tool = domain.tools[ref]
      // The Loop's state Tool (lib/loop/state-tool.js) has one fixed schema; its name is in the plan.
      text += typeof tool.instrument === "function" ? "-;" : part(schemaText(tool.inputSchema))
    }
  }
  const output = structured?.request
  if (output !== undefined) text += `o${part(output.type)}${part(schemaText(output.jsonSchema))}`
  return text
}

/** A callable Tool call: the Tool's name and input schema and the input snapshot. */
export function toolDigest(port, snapshot) {
  return journalDigest(`tool;${part(port.name)}${part(schemaText(port.inputSchema))}${part(JSON.stringify(snapshot) ?? "")}`)
}
