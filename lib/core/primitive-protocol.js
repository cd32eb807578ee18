// Entering a built-in primitive: read and check its props, then tell the engine, which
// answers with the next step (usually "feed the children"). Capabilities that have not
// landed yet fail clearly instead of being silently ignored.

import { enterAgent } from "../agents/enter.js"
import { enterContextProvider } from "./context.js"
import { enterParallel } from "./parallel.js"
import { EvaluationError } from "../errors/errors.js"
import { enterLoop } from "../loop/loop.js"
import { isMcpServer } from "../tools/mcp-server.js"
import { PRIMITIVE_KIND } from "./node.js"
import { isNormalized } from "../checks/normalized.js"
import { PRIMITIVE_LABELS } from "./primitives.js"
import { enterSandbox } from "../sandbox/sandbox.js"
import { enterScript } from "../process/script.js"
import { enterSkill } from "../skill/skill.js"
import { toolPort } from "../tools/registry.js"
import { enterWorkspace } from "../workspace/workspace.js"
import { enterFile } from "../files/file.js"
import { enterInclude } from "../files/include.js"

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
 * `<Mcp name>` or `<Mcp use>` (MCP-2). Props are checked here; placement, the allowlist and
 * duplicates are the engine's. The provider-facing AgentMcpServer entry is built now, frozen,
 * and filed in the domain table the engine's grant refers to.
 */
function grantMcp(domain, task, props) {
  if (props.children !== undefined) throw new EvaluationError("<Mcp> does not accept children")
  const name = props.name
  const use = props.use
  if ((name === undefined) === (use === undefined)) {
    throw new EvaluationError("<Mcp> requires exactly one of name or use")
  }
  let entry
  if (use === undefined) {
    if (!isNormalized(name)) throw new EvaluationError("MCP server name must be a non-empty normalized string")
    entry = Object.freeze({ kind: "named", name })
  } else {
    if (!isMcpServer(use)) throw new EvaluationError("<Mcp use> must be a defined MCP server")
    entry = Object.freeze({ kind: "configured", definition: use })
  }
  // A registered descriptor is frozen data, so these reads cannot run user code.
  const serverName = use === undefined ? name : use.name
  const kind = use === undefined ? "named" : use.transport.type
  const reference = domain.mcpServers.push(entry) - 1
  return domain.native.grantMcp(task, serverName, kind, reference)
}

/**
 * Enters the primitive `node` on top of `task`. `slot` is the driver's per-frame scratch
 * object: an Agent keeps its captured entry there until it runs. Returns a step code.
 */
export function enterPrimitive(domain, task, node, slot) {
  const kind = node.type[PRIMITIVE_KIND]
  const native = domain.native
  switch (kind) {
    case "agent":
      return enterAgent(domain, task, node, slot)
    case "sandbox":
      return enterSandbox(domain, task, node.props, slot)
    case "loop":
      return enterLoop(domain, task, node, slot)
    case "parallel":
      return enterParallel(domain, task, node, slot)
    case "context":
      slot.env = enterContextProvider(node, slot.env)
      return native.enterTransparent(task)
    case "system":
      return native.enterSystem(task)
    case "follow-up":
      return native.enterFollowUp(task)
    case "tool":
      return grantTool(domain, task, node.props)
    case "mcp":
      return grantMcp(domain, task, node.props)
    case "script":
      return enterScript(domain, task, node, slot)
    case "skill":
      return enterSkill(domain, task, node, slot)
    case "workspace":
      return enterWorkspace(domain, task, node.props, slot)
    case "file":
      return enterFile(domain, task, node, slot)
    case "include":
      return enterInclude(domain, task, node, slot)
    default:
      throw new EvaluationError(`<${PRIMITIVE_LABELS[kind]}> is not implemented by this build of @aml-jsx/sdk yet`)
  }
}
