// defineAcpAgentProvider (INVENTORY PA-7): an AgentProvider over the shared ACP engine. The
// provider opens the agent.session span, prepares the local launch (cwd, private state
// directory, launch files), starts the native session and hands it to
// runAgentProviderSession, which owns the turn loop, cancellation and the cleanup span.

import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"

import { readLaunch, readProfile } from "./acp-launch.js"
import { acpMcpServers } from "./acp-mcp-servers.js"
import { AcpSession } from "./acp-session.js"
import { runAgentProviderSession, sessionSpans } from "./agent-provider-session.js"
import { createAgentProviderTurns } from "./agent-provider-turns.js"
import { EvaluationError } from "./errors.js"
import {
  acpLaunchFilesWrite,
  acpSessionStart,
  acpStateDirectoryCreate,
  acpStateDirectoryRemove,
} from "./native.js"
import { supportsSandboxRuntime } from "./sandbox-runtime.js"

/** Test hook (not public): shorter cancel and kill grace periods, in ms. */
export const acpTestLimits = { cancelGraceMs: undefined, killGraceMs: undefined }

function childEnvironment(launchEnv) {
  const env = { ...process.env }
  for (const [key, value] of launchEnv) env[key] = value
  return Object.entries(env).filter(([, value]) => typeof value === "string")
}

async function openSession(profile, request, context, spans, sessionSpanId) {
  const name = profile.name
  // TypeErrors about the request come before any I/O.
  const mcpServers = acpMcpServers(request.mcpServers, name, profile.supportsNamed)
  const cwd = realpathSync(profile.workingDirectory ?? process.cwd())
  const stateDirectory = acpStateDirectoryCreate(tmpdir())
  let launch
  let handle
  try {
    const ctx = Object.freeze({ cwd, inheritsProcessEnvironment: true, mcpServers, request, stateDirectory })
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
      mcpServers: launch.sessionMcpServers ?? mcpServers,
      permissionPolicy: launch.permissionPolicy,
      sessionCwd: cwd,
      stateDirectory,
    }
    handle = acpSessionStart(JSON.stringify(config))
  } catch (error) {
    try {
      acpStateDirectoryRemove(stateDirectory)
    } catch (cleanup) {
      throw new AggregateError([error, cleanup], `Agent provider "${name}" ACP session cleanup failed`)
    }
    throw error
  }
  // From here the native session owns the state directory and removes it when it closes.
  const session = new AcpSession(handle, spans, sessionSpanId, launch, name, profile.installHint)
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
  if (request.tools.length > 0 || request.output !== undefined) {
    throw new EvaluationError(
      "ACP Agent Tools and structured output (the MCP bridge) are not implemented by this build of @aml-jsx/sdk yet",
    )
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
