// copilotAgent (INVENTORY BA-2): `copilot --acp` with private state, non-interactive flags,
// AML permissions as deny rules and tool exclusions, system text and the bridge's tool names
// as a first-turn prelude; the structured-output instruction names the submit tool by the
// qualified name Copilot gives MCP tools (`<server>-<tool>`).

import { join } from "node:path"

import { createAcpAgentProvider } from "../acp/provider.js"
import { SUBMIT_TOOL } from "../acp/structured.js"
import { envRecord, oneOf, optionalString, readOnly, readOptions, stringArgs, systemPrelude } from "./options.js"

const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
const TOKEN_VARIABLES = ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
const INSTALL = "Install it with `npm install --global @github/copilot`, or set the Copilot command option"

function permissionFlags(permissions) {
  const deny = []
  const excluded = []
  if (permissions.filesystem === "read-only") {
    deny.push("--deny-tool=write")
    excluded.push("edit", "write")
  }
  if (!permissions.shell) {
    deny.push("--deny-tool=shell")
    excluded.push("bash")
  }
  if (!permissions.network) {
    deny.push("--deny-tool=url")
    excluded.push("web_fetch", "web_search")
  }
  return excluded.length === 0 ? deny : [...deny, "--excluded-tools", ...excluded]
}

function prelude(request, serverName) {
  const parts = []
  const system = systemPrelude(request.system)
  if (system !== undefined) parts.push(system)
  if (serverName !== undefined && request.tools.length > 0) {
    const names = request.tools.map((tool) => `- ${tool.name}: ${serverName}-${tool.name}`)
    parts.push(`AML JavaScript Tools use these Copilot MCP tool names:\n${names.join("\n")}`)
  }
  return parts.length === 0 ? undefined : parts.join("\n\n")
}

/**
 * The token variable Copilot authenticates with: the first of TOKEN_VARIABLES set in the
 * explicit `env` option; only when none is and the launch inherits this process's
 * environment (a host launch), the first one set there. An explicit token never loses to
 * an ambient one, and a Sandbox launch never names a variable its guest does not get.
 */
function tokenVariable(env, inheritsProcessEnvironment) {
  const explicit = TOKEN_VARIABLES.find((name) => env[name] !== undefined)
  if (explicit !== undefined || !inheritsProcessEnvironment) return explicit
  return TOKEN_VARIABLES.find((name) => process.env[name] !== undefined)
}

/** The structured-output instruction with Copilot's qualified name of the submit tool. */
function structuredInstruction(serverName) {
  return `Call the Copilot MCP tool "${serverName}-${SUBMIT_TOOL}" once with the final value in its result field. If the Tool returns an error, correct the result and retry the call. After the Tool accepts a result, do not call it again. Do not return a substitute JSON value only as message text.`
}

/** The GitHub Copilot ACP Agent provider (`name: "copilot"`). */
export function copilotAgent(options) {
  const o = readOptions(options, "Copilot")
  const command = optionalString(o.command, "Copilot command") ?? "copilot"
  const model = optionalString(o.model, "Copilot model") ?? "auto"
  const workingDirectory = optionalString(o.workingDirectory, "Copilot workingDirectory")
  const args = stringArgs(o.args, "Copilot")
  const env = envRecord(o.env, "Copilot")
  const reasoningEffort = oneOf(o.reasoningEffort, EFFORTS, "Copilot reasoningEffort is unsupported")
  const profile = {
    createLaunch({ amlMcpServerName, inheritsProcessEnvironment, request, stateDirectory }) {
      const token = tokenVariable(env, inheritsProcessEnvironment)
      const launchArgs = [
        ...args,
        "--acp",
        "--no-auto-update",
        `--log-dir=${join(stateDirectory, "logs")}`,
        "--no-custom-instructions",
        "--disable-builtin-mcps",
        "--no-ask-user",
        ...(token === undefined ? [] : [`--auth-token-env=${token}`]),
        "--no-auto-login",
        "--no-color",
        "--no-remote",
        "--no-remote-export",
        `--model=${request.model ?? model}`,
        ...(reasoningEffort === undefined ? [] : [`--reasoning-effort=${reasoningEffort}`]),
        ...permissionFlags(request.permissions),
      ]
      const launch = {
        args: launchArgs,
        command,
        env: { ...env, COPILOT_HOME: stateDirectory, HOME: stateDirectory },
        initialPromptPrefix: prelude(request, amlMcpServerName),
        permissionPolicy: "allow_always",
      }
      if (amlMcpServerName !== undefined) launch.structuredOutputInstruction = structuredInstruction(amlMcpServerName)
      return launch
    },
    name: "copilot",
    workingDirectory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
