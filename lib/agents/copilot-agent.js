// copilotAgent (INVENTORY BA-2): `copilot --acp` with private state, non-interactive flags,
// AML permissions as deny rules and tool exclusions, system text and the bridge's tool names
// as a first-turn prelude.

import { join } from "node:path"

import { createAcpAgentProvider } from "../acp-agent-provider.js"
import { envRecord, oneOf, optionalString, readOnly, readOptions, stringArgs, systemPrelude } from "./agent-options.js"

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
      // The token variable is looked up in `env`, and on the host only when it is inherited.
      const token = TOKEN_VARIABLES.find(
        (name) => env[name] !== undefined || (inheritsProcessEnvironment && process.env[name] !== undefined),
      )
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
      return {
        args: launchArgs,
        command,
        env: { ...env, COPILOT_HOME: stateDirectory, HOME: stateDirectory },
        initialPromptPrefix: prelude(request, amlMcpServerName),
        permissionPolicy: "allow_always",
      }
    },
    name: "copilot",
    workingDirectory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
