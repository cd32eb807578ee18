// Entering a built-in primitive: read and check its props, then tell the engine, which
// answers with the next step (usually "feed the children"). Capabilities that have not
// landed yet fail clearly instead of being silently ignored.

import { readAgentProps } from "./agent-props.js"
import { EvaluationError } from "./errors.js"
import { PRIMITIVE_KIND } from "./node.js"
import { PRIMITIVE_LABELS } from "./primitives.js"
import { toolPort } from "./tool-registry.js"

function grantTool(domain, task, props) {
  if (props.children !== undefined) throw new EvaluationError("<Tool> does not accept children")
  const use = props.use
  if (use === undefined || "name" in props) {
    throw new EvaluationError("<Tool> requires exactly one JavaScript Tool through use")
  }
  const port = toolPort(use)
  if (port === undefined) throw new EvaluationError("<Tool use> must be a JavaScript Tool")
  if (!port.validInputSchema) {
    throw new EvaluationError(`<Tool use> "${port.name}" has an invalid input JSON Schema`)
  }
  const reference = domain.tools.push(port) - 1
  return domain.native.grantTool(task, port.name, reference)
}

/**
 * Enters the primitive `node` on top of `task`. `slot` is the driver's per-frame scratch
 * object: an Agent keeps its captured entry there until it runs. Returns a step code.
 */
export function enterPrimitive(domain, task, node, slot) {
  const kind = node.type[PRIMITIVE_KIND]
  const native = domain.native
  switch (kind) {
    case "agent": {
      const entry = readAgentProps(node.props, domain.options.agentProvider, undefined)
      slot.entry = entry
      const provider = entry.provider
      // Provider name and model only feed span attributes: skip the strings when untraced.
      if (!domain.tracing) return native.enterAgent(task, provider !== undefined, null, null, entry.system)
      return native.enterAgent(task, provider !== undefined, provider?.name, entry.model, entry.system)
    }
    case "system":
      return native.enterSystem(task)
    case "follow-up":
      return native.enterFollowUp(task)
    case "tool":
      return grantTool(domain, task, node.props)
    default:
      throw new EvaluationError(`<${PRIMITIVE_LABELS[kind]}> is not implemented by this build of @aml-jsx/sdk yet`)
  }
}
