// AmlRuntime option capture and validation (INVENTORY RT-1). Options are read once, in the
// documented order, and the captured copy is frozen: later mutation of the caller's object
// has no effect.

import { resolve } from "node:path"

import { isNormalized } from "../checks/normalized.js"
import { captureAgentProvider, captureSandboxProvider, captureWorkspaceProvider } from "./provider-shape.js"

const LIMITS = [
  ["maxAgentCalls", 32],
  ["maxDepth", 16],
  ["maxConcurrentAgents", 4],
  ["maxTurnsPerAgent", 16],
  ["maxStateTransitions", 16],
  // Reported tokens (issue 37); off by default.
  ["maxTokens", 0],
]

export function limit(options, name, fallback) {
  const value = options[name]
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative safe integer`)
  }
  return value
}

function nameList(options, name) {
  const value = options[name]
  if (value === undefined) return undefined
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array`)
  const names = [...value]
  if (!names.every(isNormalized)) {
    throw new TypeError(`${name} entries must be non-empty normalized strings`)
  }
  return Object.freeze(names)
}

export function captureRuntimeOptions(options = {}) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("AmlRuntime options must be an object")
  }
  const trace = options.trace
  if (trace !== undefined && typeof trace !== "function") throw new TypeError("trace must be a function")
  const onTraceError = options.onTraceError
  if (onTraceError !== undefined && typeof onTraceError !== "function") {
    throw new TypeError("onTraceError must be a function")
  }
  const limits = {}
  for (const [name, fallback] of LIMITS) limits[name] = limit(options, name, fallback)
  const allowedMcpServers = nameList(options, "allowedMcpServers")
  const allowedTools = nameList(options, "allowedTools")
  // Each option is read exactly once: a getter or Proxy sees one read per option.
  const systemOption = options.system
  const system = systemOption === undefined ? "" : systemOption
  if (typeof system !== "string") throw new TypeError("system must be a string")
  const agentOption = options.agentProvider
  const agentProvider = agentOption === undefined ? undefined : captureAgentProvider(agentOption)
  const sandboxOption = options.sandboxProvider
  const sandboxProvider = sandboxOption === undefined ? undefined : captureSandboxProvider(sandboxOption)
  const cwdOption = options.cwd
  if (cwdOption !== undefined && (typeof cwdOption !== "string" || cwdOption.length === 0)) {
    throw new TypeError("cwd must be a non-empty string")
  }
  const cwd = resolve(cwdOption ?? process.cwd())
  const workspaceOption = options.workspaceProvider
  const workspaceProvider = workspaceOption === undefined ? undefined : captureWorkspaceProvider(workspaceOption)
  return Object.freeze({
    agentProvider,
    allowedMcpServers,
    allowedTools,
    cwd,
    limits: Object.freeze(limits),
    onTraceError,
    sandboxProvider,
    system,
    trace,
    workspaceProvider,
  })
}

/** The limits in the order the native constructor takes them. */
export function nativeLimits(limits) {
  return [
    limits.maxAgentCalls,
    limits.maxConcurrentAgents,
    limits.maxDepth,
    limits.maxTurnsPerAgent,
    limits.maxStateTransitions,
    limits.maxTokens,
  ]
}
