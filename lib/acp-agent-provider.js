// defineAcpAgentProvider (INVENTORY PA-7): an AgentProvider over the shared ACP engine. The
// provider opens the agent.session span, prepares the local launch (cwd, private state
// directory, launch files), starts the native session and hands it to
// runAgentProviderSession, which owns the turn loop, cancellation and the cleanup span.

import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"

import { readLaunch, readProfile } from "./acp-launch.js"
import { acpMcpServers } from "./acp-mcp-servers.js"
import { AcpSession } from "./acp-session.js"
import { DEFAULT_INSTRUCTION, SUBMIT_TOOL, Submission } from "./acp-structured.js"
import { runAgentProviderSession, sessionSpans } from "./agent-provider-session.js"
import { createAgentProviderTurns } from "./agent-provider-turns.js"
import { structuredOutputServices } from "./agent-services.js"
import { EvaluationError } from "./errors.js"
import { lendTools } from "./native-tool-dispatch.js"
import {
  acpBridgeStart,
  acpBridgeStop,
  acpLaunchFilesWrite,
  acpSessionStart,
  acpStateDirectoryCreate,
  acpStateDirectoryRemove,
} from "./native.js"
import { supportsSandboxRuntime } from "./sandbox-runtime.js"

/** Test hook (not public): shorter cancel and kill grace periods, in ms. */
export const acpTestLimits = { cancelGraceMs: undefined, killGraceMs: undefined }

// MCP tool names (2025-06-18 spec guidance): what a client can be expected to carry.
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/

function checkToolNames(tools) {
  for (const tool of tools) {
    if (tool.name === SUBMIT_TOOL) throw new TypeError(`AML JavaScript Tool name "${SUBMIT_TOOL}" is reserved`)
    if (!MCP_TOOL_NAME.test(tool.name)) {
      throw new TypeError(
        `AML Tool "${tool.name}" cannot be served over MCP: its name must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "-" and "."`,
      )
    }
  }
}

/** Lends `tools` to a native MCP bridge; `release()` stops it and takes them back. */
async function startBridge(tools, signal) {
  if (tools.length === 0) return { release() {} }
  const lent = lendTools(tools, signal)
  let bridge
  try {
    bridge = await acpBridgeStart(lent.json)
  } catch (error) {
    lent.release()
    throw error
  }
  return {
    descriptor: JSON.parse(bridge.descriptor),
    name: bridge.name,
    release() {
      acpBridgeStop(bridge.handle)
      lent.release()
    },
  }
}

function childEnvironment(launchEnv) {
  const env = { ...process.env }
  for (const [key, value] of launchEnv) env[key] = value
  return Object.entries(env).filter(([, value]) => typeof value === "string")
}

async function openSession(profile, request, context, spans, sessionSpanId) {
  const name = profile.name
  // TypeErrors about the request come before any I/O.
  const authored = acpMcpServers(request.mcpServers, name, profile.supportsNamed)
  checkToolNames(request.tools)
  let submission
  if (request.output !== undefined) {
    const service = structuredOutputServices.get(context)
    if (service === undefined) throw new TypeError("ACP Agent structured output requires an AML execution context")
    submission = new Submission(service)
  }
  const cwd = realpathSync(profile.workingDirectory ?? process.cwd())
  const served = submission === undefined ? request.tools : [...request.tools, submission.tool()]
  const bridge = await startBridge(served, context.signal)
  let stateDirectory
  let launch
  let handle
  try {
    stateDirectory = acpStateDirectoryCreate(tmpdir())
    // The bridge is one more HTTP server of the session, last, and named in the context.
    const mcpServers =
      bridge.descriptor === undefined ? authored : Object.freeze([...authored, Object.freeze(bridge.descriptor)])
    const ctx = Object.freeze({
      amlMcpServerName: bridge.name,
      cwd,
      inheritsProcessEnvironment: true,
      mcpServers,
      request,
      stateDirectory,
    })
    launch = readLaunch(await profile.createLaunch(ctx))
    const problem = acpLaunchFilesWrite(stateDirectory, JSON.stringify(launch.files))
    if (problem !== null) throw new TypeError(problem)
    const config = {
      args: launch.args,
      authenticationMethodId: launch.authenticationMethodId,
      cancelGraceMs: acpTestLimits.cancelGraceMs,
      command: launch.command,
      configuration: launch.configuration,
      cwd,
      env: childEnvironment(launch.env),
      inheritEnv: false,
      killGraceMs: acpTestLimits.killGraceMs,
      mcpServers: launch.sessionMcpServers ?? ctx.mcpServers,
      permissionPolicy: launch.permissionPolicy,
      sessionCwd: cwd,
      stateDirectory,
    }
    handle = acpSessionStart(JSON.stringify(config))
  } catch (error) {
    bridge.release()
    try {
      if (stateDirectory !== undefined) acpStateDirectoryRemove(stateDirectory)
    } catch (cleanup) {
      throw new AggregateError([error, cleanup], `Agent provider "${name}" ACP session cleanup failed`)
    }
    throw error
  }
  // From here the native session owns the state directory and removes it when it closes;
  // the session stops the bridge once the agent is gone.
  const structured =
    submission === undefined
      ? undefined
      : { instruction: launch.structuredOutputInstruction ?? DEFAULT_INSTRUCTION, submission }
  const session = new AcpSession(handle, spans, sessionSpanId, launch, name, profile.installHint, bridge.release, structured)
  await session.open(context.signal)
  return session
}

async function run(profile, request, context) {
  const name = profile.name
  const turns = createAgentProviderTurns(request, name)
  const signal = context.signal
  if (signal.aborted) throw signal.reason
  if (context.sandbox !== undefined) {
    throw new EvaluationError("ACP Agent Sandbox launch is not implemented by this build of @aml-jsx/sdk yet")
  }
  const attributes = { provider: name }
  if (request.model !== undefined) attributes.model = request.model
  const spans = sessionSpans(context)
  const spanId = spans?.open("agent.session", attributes)
  try {
    const session = await openSession(profile, request, context, spans, spanId)
    const response = await runAgentProviderSession(session, turns, context, name, spans, spanId, session.hooks)
    spans?.close(spanId)
    return response
  } catch (error) {
    spans?.fail(spanId, error)
    throw error
  }
}

/**
 * The provider of `profile`; `installHint` (used by the built-in profiles) is appended to
 * the error for a command that is not on PATH.
 */
export function createAcpAgentProvider(profile, installHint) {
  const captured = { ...readProfile(profile), installHint }
  return Object.freeze({
    name: captured.name,
    run: (request, context) => run(captured, request, context),
    supportsSandbox: supportsSandboxRuntime,
  })
}

/** Public PA-7 entry. */
export function defineAcpAgentProvider(profile) {
  return createAcpAgentProvider(profile, undefined)
}
