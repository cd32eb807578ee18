// The ACP profile and launch contracts (INVENTORY PA-7): what defineAcpAgentProvider accepts
// and what a profile's createLaunch(ctx) must return, checked and turned into plain data for
// the native session. The documents give no texts for a malformed profile or launch; the
// TypeErrors below are ours (docs/ACP.md lists them).

import { isNormalized as normalizedName } from "../../checks/normalized.js"
import { isRecord } from "../../checks/shapes.js"

const POLICIES = new Set(["allow_once", "allow_always", "reject_once", "reject_always"])



/** Captures a profile once (each member read a single time). */
export function readProfile(profile) {
  if (!isRecord(profile)) throw new TypeError("ACP Agent profile must be an object")
  let name, workingDirectory, createLaunch, supportsNamedMcpServer
  try {
    ;({ name, workingDirectory, createLaunch, supportsNamedMcpServer } = profile)
  } catch (cause) {
    throw new TypeError("ACP Agent profile must be readable", { cause })
  }
  if (!normalizedName(name)) throw new TypeError("ACP Agent profile name must be a non-empty normalized string")
  if (workingDirectory !== undefined && !normalizedName(workingDirectory)) {
    throw new TypeError("ACP Agent profile workingDirectory must be a non-empty normalized string")
  }
  if (typeof createLaunch !== "function") throw new TypeError("ACP Agent profile createLaunch must be a function")
  if (supportsNamedMcpServer !== undefined && typeof supportsNamedMcpServer !== "function") {
    throw new TypeError("ACP Agent profile supportsNamedMcpServer must be a function when provided")
  }
  const supportsNamed =
    supportsNamedMcpServer === undefined ? undefined : (server) => supportsNamedMcpServer.call(profile, server)
  return { createLaunch: (ctx) => createLaunch.call(profile, ctx), name, supportsNamed, workingDirectory }
}

function optionalString(launch, key) {
  const value = launch[key]
  if (value !== undefined && typeof value !== "string") {
    throw new TypeError(`ACP Agent launch ${key} must be a string`)
  }
  return value
}

function stringArray(value, label) {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && !item.includes("\0"))) {
    throw new TypeError(`ACP Agent launch ${label} must be an array of strings without null bytes`)
  }
  return [...value]
}

function envPairs(env) {
  if (env === undefined) return []
  if (!isRecord(env)) throw new TypeError("ACP Agent launch env must be an object of strings")
  const out = []
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== "string" || key.includes("=") || key.includes("\0") || value.includes("\0")) {
      throw new TypeError("ACP Agent launch env must be an object of strings")
    }
    out.push([key, value])
  }
  return out
}

function files(value) {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new TypeError("ACP Agent launch files must be an array")
  return value.map((file) => {
    if (!isRecord(file) || typeof file.path !== "string" || typeof file.content !== "string") {
      throw new TypeError("ACP Agent launch files must contain { path, content } strings")
    }
    if (file.executable !== undefined && typeof file.executable !== "boolean") {
      throw new TypeError("ACP Agent launch file executable must be a boolean")
    }
    return { content: file.content, executable: file.executable === true, path: file.path }
  })
}

function configuration(value) {
  if (value === undefined) return []
  const message = "ACP Agent launch configuration must contain { category, value } or { id, value } entries"
  if (!Array.isArray(value)) throw new TypeError(message)
  return value.map((entry) => {
    if (!isRecord(entry)) throw new TypeError(message)
    const { category, id, value: chosen } = entry
    const byCategory = typeof category === "string" && id === undefined
    const byId = typeof id === "string" && category === undefined
    if ((!byCategory && !byId) || (typeof chosen !== "string" && typeof chosen !== "boolean")) {
      throw new TypeError(message)
    }
    return byCategory ? { category, value: chosen } : { id, value: chosen }
  })
}

/** Checks a launch and returns its plain form (`transformText` stays a function). */
export function readLaunch(launch) {
  if (!isRecord(launch)) throw new TypeError("ACP Agent launch must be an object")
  const { command } = launch
  if (typeof command !== "string" || command.length === 0 || command.includes("\0")) {
    throw new TypeError("ACP Agent launch command must be a non-empty string")
  }
  const permissionPolicy = launch.permissionPolicy ?? "reject_once"
  if (!POLICIES.has(permissionPolicy)) {
    throw new TypeError(
      'ACP Agent launch permissionPolicy must be "allow_once", "allow_always", "reject_once" or "reject_always"',
    )
  }
  const { sessionMcpServers, transformText } = launch
  if (sessionMcpServers !== undefined && !Array.isArray(sessionMcpServers)) {
    throw new TypeError("ACP Agent launch sessionMcpServers must be an array")
  }
  if (transformText !== undefined && typeof transformText !== "function") {
    throw new TypeError("ACP Agent launch transformText must be a function")
  }
  const { startupTimeoutMs } = launch
  if (startupTimeoutMs !== undefined && !(Number.isSafeInteger(startupTimeoutMs) && startupTimeoutMs > 0)) {
    throw new TypeError("ACP Agent launch startupTimeoutMs must be a positive integer")
  }
  return {
    args: stringArray(launch.args, "args"),
    authenticationMethodId: optionalString(launch, "authenticationMethodId"),
    command,
    configuration: configuration(launch.configuration),
    env: envPairs(launch.env),
    files: files(launch.files),
    initialPromptPrefix: optionalString(launch, "initialPromptPrefix"),
    permissionPolicy,
    sessionMcpServers: sessionMcpServers === undefined ? undefined : JSON.parse(JSON.stringify(sessionMcpServers)),
    startupTimeoutMs,
    structuredOutputInstruction: optionalString(launch, "structuredOutputInstruction"),
    transformText,
  }
}
