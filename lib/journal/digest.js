// Request digests for the evaluation journal (docs/JOURNAL.md): a step is replayed only
// when the request it would make now is the request whose answer was recorded. Every part
// of the canonical text is length-prefixed, so distinct requests never share a text. The
// framing and the hash are Rust's (crates/aml-journal/src/digest.rs); this file only hands
// over the parts JS holds. Schemas are frozen snapshots reused across calls, so their JSON
// text is cached by identity.

import { journalToolDigest } from "../core/native.js"

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

/**
 * The part of an Agent digest only JS holds (the engine hashes the rest from its plan:
 * provider name, model, prompt, system, follow-ups, Tool, MCP server and Skill names;
 * src/hot_path/journal.rs): the granted Tools' input schemas and the output schema, as the
 * JSON that crates/aml-journal/src/digest.rs frames (`null` for the Loop's state Tool, whose
 * one fixed schema is named by the plan). Undefined when there is neither, which spares the
 * plain Agent any JS work.
 */
export function agentExtra(domain, task, structured) {
  if (domain.tools.length === 0 && structured === undefined) return undefined
  const tools = []
  if (domain.tools.length > 0) {
    for (const ref of domain.native.agentTools(task)) {
      const tool = domain.tools[ref]
      tools.push(typeof tool.instrument === "function" ? null : schemaText(tool.inputSchema))
    }
  }
  const output = structured?.request
  return JSON.stringify({ output: output === undefined ? null : [output.type, schemaText(output.jsonSchema)], tools })
}

/** A callable Tool call: the Tool's name and input schema and the input snapshot. */
export function toolDigest(port, snapshot) {
  return journalToolDigest(port.name, schemaText(port.inputSchema), JSON.stringify(snapshot) ?? "")
}
