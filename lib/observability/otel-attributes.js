// How AML trace events become OpenTelemetry span names and attributes (docs/OBSERVABILITY.md):
// every AML attribute under `aml.<key>`, plus the GenAI semantic-convention attributes of
// Agent and Tool spans. Content attributes (prompt, output, Tool input…) are only present in
// the events of a content-capturing listener, so the GenAI content attributes derived from
// them follow AML's consent rules without a check here.

const prefixed = new Map()

/** `aml.<key>`, memoised: the same few keys recur on every span. */
function amlKey(key) {
  let name = prefixed.get(key)
  if (name === undefined) {
    name = `aml.${key}`
    prefixed.set(key, name)
  }
  return name
}

/** Copies AML attributes into `target` under the `aml.` namespace. Arrays are copied (OTel may keep them). */
export function copyAmlAttributes(target, attributes) {
  for (const key in attributes) {
    const value = attributes[key]
    if (Array.isArray(value)) target[amlKey(key)] = [...value]
    // The one object attribute, `usage` (issue 37): OTel attributes are scalars, so each
    // reported field becomes `aml.usage.<field>`.
    else if (typeof value === "object" && value !== null) {
      for (const field in value) target[amlKey(`${key}.${field}`)] = value[field]
    } else target[amlKey(key)] = value
  }
  return target
}

/** Span names by kind and AML name, and Agent span names by agent name: each built once. */
const names = new Map()
const agentNames = new Map()
/** Bounded: names come from authored components and Tools, but generated ones must not grow these forever. */
const MAX_NAMES = 1024

function remember(map, key, value) {
  if (map.size < MAX_NAMES) map.set(key, value)
  return value
}

/** The OpenTelemetry span name of an AML span (memoised: the same few names recur on every span). */
export function spanName(kind, name, agentName) {
  if (kind === "agent" && name === "Agent") {
    if (agentName === undefined) return "invoke_agent"
    return agentNames.get(agentName) ?? remember(agentNames, agentName, `invoke_agent ${agentName}`)
  }
  if (kind === "evaluation") return "aml.evaluate"
  let byName = names.get(kind)
  if (byName === undefined) names.set(kind, (byName = new Map()))
  const known = byName.get(name)
  if (known !== undefined) return known
  if (kind === "tool") return remember(byName, name, `execute_tool ${name}`)
  return remember(byName, name, name.startsWith(`${kind}.`) ? name : `${kind} ${name}`)
}

function textMessages(role, content) {
  return JSON.stringify([{ role, parts: [{ type: "text", content }] }])
}

/**
 * Attributes of a span start: identity, AML attributes, GenAI operation attributes. `span` is
 * the exporter's span state: `kind`, `name`, `id`, `parentId`, `attributes` (the start
 * attributes, content included when consented) and `agentName`.
 */
export function startAttributes(span, runId) {
  const { kind, name } = span
  const attributes = {
    "aml.span.kind": kind,
    "aml.span.name": name,
    "aml.span.id": span.id,
    "aml.run.id": runId,
  }
  if (span.parentId !== undefined) attributes["aml.parent.span.id"] = span.parentId
  const amlAttributes = span.attributes
  copyAmlAttributes(attributes, amlAttributes)
  if (kind === "agent") {
    if (name === "Agent") {
      attributes["gen_ai.operation.name"] = "invoke_agent"
      if (span.agentName !== undefined) attributes["gen_ai.agent.name"] = span.agentName
    }
    agentAttributes(attributes, amlAttributes)
  } else if (kind === "tool") {
    attributes["gen_ai.operation.name"] = "execute_tool"
    attributes["gen_ai.tool.name"] = name
    attributes["gen_ai.tool.type"] = "function"
    const input = amlAttributes.input
    if (typeof input === "string") attributes["gen_ai.tool.call.arguments"] = input
  }
  return attributes
}

/** GenAI attributes carried by the Agent, agent.session and agent.turn spans' AML attributes. */
function agentAttributes(target, attributes) {
  const { model, output, prompt, provider, sessionId, system, usage } = attributes
  if (typeof provider === "string") target["gen_ai.provider.name"] = provider
  if (typeof model === "string") target["gen_ai.request.model"] = model
  if (typeof sessionId === "string") target["gen_ai.conversation.id"] = sessionId
  if (typeof usage === "string") usageAttributes(target, usage)
  else if (typeof usage === "object" && usage !== null) tokenAttributes(target, usage)
  if (typeof prompt === "string") target["gen_ai.input.messages"] = textMessages("user", prompt)
  if (typeof system === "string" && system.length > 0) target["gen_ai.system_instructions"] = JSON.stringify([{ type: "text", content: system }])
  if (typeof output === "string") target["gen_ai.output.messages"] = textMessages("assistant", output)
}

/** ACP `usage` JSON (`inputTokens`, `outputTokens`) as GenAI token counts; anything else is left out. */
function usageAttributes(target, json) {
  let usage
  try {
    usage = JSON.parse(json)
  } catch {
    return
  }
  if (usage === null || typeof usage !== "object") return
  tokenAttributes(target, usage)
}

/** GenAI token counts of a usage object (an Agent span's `usage`, or ACP's parsed JSON). */
function tokenAttributes(target, usage) {
  if (typeof usage.inputTokens === "number") target["gen_ai.usage.input_tokens"] = usage.inputTokens
  if (typeof usage.outputTokens === "number") target["gen_ai.usage.output_tokens"] = usage.outputTokens
  if (typeof usage.cachedInputTokens === "number") target["gen_ai.usage.cache_read.input_tokens"] = usage.cachedInputTokens
  if (typeof usage.reasoningTokens === "number") target["gen_ai.usage.reasoning.output_tokens"] = usage.reasoningTokens
}

/**
 * Adds what a span end carries to `target`: the end attributes under `aml.`, GenAI results,
 * `error.type`. A span created at its end gets these on top of its start attributes.
 */
export function addEndAttributes(target, kind, attributes, failed) {
  copyAmlAttributes(target, attributes)
  if (kind === "agent") agentAttributes(target, attributes)
  else if (kind === "tool") {
    const output = attributes.output
    if (typeof output === "string") target["gen_ai.tool.call.result"] = output
  }
  if (failed) target["error.type"] = errorType(attributes)
  return target
}

/** AML's `error.type` of a failed span's end attributes. */
export function errorType(attributes) {
  const type = attributes["error.type"]
  return typeof type === "string" ? type : "Error"
}
