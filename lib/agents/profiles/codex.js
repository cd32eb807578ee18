// codexAgent (INVENTORY BA-1): `codex-acp` with a private CODEX_HOME, configuration through
// CODEX_CONFIG, filesystem mode through INITIAL_AGENT_MODE, system text as
// developer_instructions.

import { join } from "node:path"

import { createAcpAgentProvider } from "../acp/provider.js"
import { envRecord, oneOf, optionalString, readOnly, readOptions, stringArgs } from "./options.js"

const EFFORTS = ["minimal", "low", "medium", "high", "xhigh"]
const INSTALL = "Install it with `npm install --global @agentclientprotocol/codex-acp @openai/codex`, or set the Codex command option"

function jsonConfig(config) {
  if (config === undefined) return {}
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new TypeError("Codex config must be an object")
  }
  let text
  try {
    text = JSON.stringify(config)
  } catch {
    text = undefined
  }
  if (text === undefined) throw new TypeError("Codex config must be JSON serializable")
  return JSON.parse(text)
}

/** The Codex ACP Agent provider (`name: "codex"`). */
export function codexAgent(options) {
  const o = readOptions(options, "Codex")
  const command = optionalString(o.command, "Codex command") ?? "codex-acp"
  const apiKey = optionalString(o.apiKey, "Codex apiKey")
  const model = optionalString(o.model, "Codex model")
  const codexPath = optionalString(o.codexPathOverride, "Codex codexPathOverride") ?? "codex"
  const workingDirectory = optionalString(o.workingDirectory, "Codex workingDirectory")
  const args = stringArgs(o.args, "Codex")
  const env = envRecord(o.env, "Codex")
  const config = jsonConfig(o.config)
  const reasoningEffort = oneOf(o.reasoningEffort, EFFORTS, "Codex reasoningEffort is unsupported")
  const profile = {
    createLaunch({ request, stateDirectory }) {
      const effective = { ...config }
      if (reasoningEffort !== undefined) effective.model_reasoning_effort = reasoningEffort
      const chosen = request.model ?? model
      if (chosen !== undefined) effective.model = chosen
      if (request.system.length > 0) effective.developer_instructions = request.system
      const launchEnv = {
        CODEX_HOME: stateDirectory,
        ...env,
        APP_SERVER_LOGS: join(stateDirectory, "logs"),
        CODEX_CONFIG: JSON.stringify(effective),
        CODEX_PATH: codexPath,
        CODEX_SQLITE_HOME: stateDirectory,
        INITIAL_AGENT_MODE: readOnly(request) ? "read-only" : "agent-full-access",
        NO_BROWSER: "1",
      }
      if (apiKey !== undefined) launchEnv.CODEX_API_KEY = apiKey
      const keyed = apiKey !== undefined || env.CODEX_API_KEY !== undefined || env.OPENAI_API_KEY !== undefined
      return {
        args,
        authenticationMethodId: keyed ? "api-key" : undefined,
        command,
        env: launchEnv,
        permissionPolicy: readOnly(request) ? "allow_once" : "allow_always",
      }
    },
    name: "codex",
    workingDirectory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
