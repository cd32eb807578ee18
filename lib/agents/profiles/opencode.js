// opencodeAgent (INVENTORY BA-4): `opencode acp --pure --cwd <cwd>` with a private database
// and XDG directories, an AML-owned primary agent whose tools and permissions follow the
// request's permissions, and system text as a first-turn `<SYSTEM>` prelude.

import { join } from "node:path"

import { createAcpAgentProvider } from "../acp/provider.js"
import { envRecord, optionalString, readOptions, stringArgs, systemPrelude } from "./options.js"

const INSTALL = "Install it with `npm install --global opencode-ai`, or set the OpenCode command option"

/** A JSON snapshot of `value`, or the documented TypeError. */
function jsonSnapshot(value, seen = new Set()) {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("OpenCode config must contain only finite JSON numbers")
    return value
  }
  if (typeof value !== "object") throw new TypeError("OpenCode config must contain only JSON values")
  if (seen.has(value)) throw new TypeError("OpenCode config must not contain cycles")
  seen.add(value)
  let out
  if (Array.isArray(value)) out = value.map((item) => jsonSnapshot(item, seen))
  else {
    const prototype = Object.getPrototypeOf(value)
    if (prototype !== Object.prototype && prototype !== null) {
      throw new TypeError("OpenCode config must contain only JSON values")
    }
    out = {}
    for (const [key, item] of Object.entries(value)) out[key] = jsonSnapshot(item, seen)
  }
  seen.delete(value)
  return out
}

/**
 * The AML agent's native controls: everything allowed first (`"*"`), then one denial per
 * capability the request's permissions withhold. OpenCode applies the last matching rule, so
 * the wildcard must come before the denials (JSON key order is the rule order).
 */
function agentProfile(permissions) {
  const denied = []
  if (permissions.filesystem === "read-only") denied.push("edit", "write")
  if (!permissions.shell) denied.push("bash")
  if (!permissions.network) denied.push("webfetch", "websearch")
  const permission = { "*": "allow" }
  const tools = { "*": true }
  for (const tool of denied) {
    permission[tool] = "deny"
    tools[tool] = false
  }
  return { mode: "primary", permission, tools }
}

/** The OpenCode ACP Agent provider (`name: "opencode"`). */
export function opencodeAgent(options) {
  const o = readOptions(options, "OpenCode")
  const command = optionalString(o.command, "OpenCode command") ?? "opencode"
  const directory = optionalString(o.directory, "OpenCode directory")
  const model = optionalString(o.model, "OpenCode model")
  const args = stringArgs(o.args, "OpenCode")
  const env = envRecord(o.env, "OpenCode")
  if (o.config !== undefined && (typeof o.config !== "object" || o.config === null || Array.isArray(o.config))) {
    throw new TypeError("OpenCode config must be an object")
  }
  const config = jsonSnapshot(o.config ?? {})
  const profile = {
    createLaunch({ cwd, request, stateDirectory }) {
      const agents = typeof config.agent === "object" && config.agent !== null ? config.agent : {}
      const effective = {
        ...config,
        agent: { ...agents, aml: agentProfile(request.permissions) },
        default_agent: "aml",
      }
      const chosen = request.model ?? model
      if (chosen !== undefined) effective.model = chosen
      return {
        args: ["acp", "--pure", "--cwd", cwd, ...args],
        command,
        env: {
          ...env,
          OPENCODE_CONFIG_CONTENT: JSON.stringify(effective),
          OPENCODE_DB: join(stateDirectory, "opencode.db"),
          XDG_CACHE_HOME: join(stateDirectory, "cache"),
          XDG_CONFIG_HOME: join(stateDirectory, "config"),
          XDG_DATA_HOME: join(stateDirectory, "data"),
          XDG_STATE_HOME: join(stateDirectory, "state"),
        },
        initialPromptPrefix: systemPrelude(request.system),
        permissionPolicy: "allow_always",
      }
    },
    name: "opencode",
    workingDirectory: directory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
