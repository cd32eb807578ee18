// defineAcpAgentProvider (INVENTORY PA-7): an AgentProvider over the shared ACP engine. The
// provider opens the agent.session span, prepares the local launch (cwd, private state
// directory, launch files), starts the native session and hands it to
// runAgentProviderSession, which owns the turn loop, cancellation and the cleanup span.

import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"

import { readLaunch, readProfile } from "./launch.js"
import { acpMcpServers } from "./mcp-servers.js"
import {
  createGuestState,
  materializeGuestFiles,
  removeGuestState,
  resolveGuestCwd,
  sandboxReachesHost,
} from "./sandbox-launch.js"
import { pumpSandboxProcess } from "./sandbox-process.js"
import { startSandboxRelay } from "./sandbox-relay.js"
import { AcpSession } from "./session.js"
import { DEFAULT_INSTRUCTION, SUBMIT_TOOL, Submission } from "./structured.js"
import { runAgentProviderSession, sessionSpans } from "../provider-session.js"
import { createAgentProviderTurns } from "../provider-turns.js"
import { structuredOutputServices } from "../services.js"
import { lendTools } from "../../tools/native-dispatch.js"
import { startLoopBridge } from "./loop-bridge.js"
import {
  acpLaunchFilesWrite,
  acpSessionStart,
  acpSessionStartExternal,
  acpStateDirectoryCreate,
  acpStateDirectoryRemove,
} from "../../core/native.js"
import { supportsSandboxRuntime } from "../../sandbox/runtime.js"


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

/** Lends `tools` to an MCP bridge (lib/agents/acp/loop-bridge.js); `release()` stops it and takes them back. */
async function startBridge(tools, signal) {
  if (tools.length === 0) return { release() {} }
  const lent = lendTools(tools, signal)
  let bridge
  try {
    bridge = await startLoopBridge(lent.json)
  } catch (error) {
    lent.release()
    throw error
  }
  return {
    descriptor: bridge.descriptor,
    handle: bridge.handle,
    name: bridge.name,
    release() {
      bridge.stop()
      lent.release()
    },
  }
}

function childEnvironment(launchEnv) {
  const env = { ...process.env }
  for (const [key, value] of launchEnv) env[key] = value
  return Object.entries(env).filter(([, value]) => typeof value === "string")
}

/** Reads the request's MCP/Tool/structured parts; TypeErrors come before any I/O. */
function readRequest(profile, request, context) {
  const authored = acpMcpServers(request.mcpServers, profile.name, profile.supportsNamed)
  checkToolNames(request.tools)
  let submission
  if (request.output !== undefined) {
    const service = structuredOutputServices.get(context)
    if (service === undefined) throw new TypeError("ACP Agent structured output requires an AML execution context")
    submission = new Submission(service)
  }
  const served = submission === undefined ? request.tools : [...request.tools, submission.tool()]
  return { authored, served, submission }
}

function launchContext(bridge, authored, cwd, inherits, request, stateDirectory) {
  // The bridge is one more HTTP server of the session, last, and named in the context.
  const mcpServers =
    bridge.descriptor === undefined ? authored : Object.freeze([...authored, Object.freeze(bridge.descriptor)])
  return Object.freeze({
    amlMcpServerName: bridge.name,
    cwd,
    inheritsProcessEnvironment: inherits,
    mcpServers,
    request,
    stateDirectory,
  })
}

function sessionConfig(launch, ctx, cwd, env, stateDirectory) {
  return {
    args: launch.args,
    authenticationMethodId: launch.authenticationMethodId,
    command: launch.command,
    configuration: launch.configuration,
    cwd,
    env,
    inheritEnv: false,
    mcpServers: launch.sessionMcpServers ?? ctx.mcpServers,
    permissionPolicy: launch.permissionPolicy,
    sessionCwd: cwd,
    startupRequestMs: launch.startupTimeoutMs,
    stateDirectory,
  }
}

/** Local launch: host cwd, host state directory, a supervised host child. */
async function openLocal(profile, request, context, parts) {
  const cwd = realpathSync(profile.workingDirectory ?? process.cwd())
  const bridge = await startBridge(parts.served, context.signal)
  let stateDirectory
  let launch
  let handle
  try {
    stateDirectory = acpStateDirectoryCreate(tmpdir())
    const ctx = launchContext(bridge, parts.authored, cwd, true, request, stateDirectory)
    launch = readLaunch(await profile.createLaunch(ctx))
    const problem = acpLaunchFilesWrite(stateDirectory, JSON.stringify(launch.files))
    if (problem !== null) throw new TypeError(problem)
    handle = acpSessionStart(JSON.stringify(sessionConfig(launch, ctx, cwd, childEnvironment(launch.env), stateDirectory)))
  } catch (error) {
    bridge.release()
    try {
      if (stateDirectory !== undefined) acpStateDirectoryRemove(stateDirectory)
    } catch (cleanup) {
      throw new AggregateError([error, cleanup], `Agent provider "${profile.name}" ACP session cleanup failed`)
    }
    throw error
  }
  // From here the native session owns the state directory and removes it when it closes;
  // the session stops the bridge once the agent is gone.
  return { handle, launch, release: bridge.release }
}

/**
 * Sandbox launch: everything through the lease's runtime (guest cwd, guest state, files,
 * spawn); the native session runs over the pumped SandboxProcess.
 */
async function openInSandbox(profile, request, context, parts, spans, sessionSpanId) {
  const name = profile.name
  const sandbox = context.sandbox
  const signal = context.signal
  const cwd = await resolveGuestCwd(name, sandbox, signal)
  const bridge = await startBridge(parts.served, signal)
  // Owned by the session: aborting it is the Sandbox's own backstop kill after cleanup.
  const owned = new AbortController()
  let stateDirectory
  let launch
  let child
  let handle
  let relay
  try {
    stateDirectory = await createGuestState(name, sandbox, signal)
    // A guest that is not this host reaches the bridge through the relay, at a guest URL.
    let served = bridge
    if (bridge.descriptor !== undefined && !sandboxReachesHost(sandbox)) {
      relay = await startSandboxRelay(name, sandbox, bridge, signal)
      served = { ...bridge, descriptor: relay.descriptor }
    }
    const ctx = launchContext(served, parts.authored, cwd, false, request, stateDirectory)
    launch = readLaunch(await profile.createLaunch(ctx))
    await materializeGuestFiles(sandbox, stateDirectory, launch.files, signal)
    const commandLine = [launch.command, ...launch.args].join(" ")
    spans?.point(sessionSpanId, "sandbox.process", { state: "spawn_requested" }, { command: commandLine })
    const env = Object.fromEntries(launch.env)
    try {
      child = await sandbox.lease.runtime.spawn(launch.command, launch.args, { cwd: sandbox.cwd, env, signal: owned.signal })
    } catch (error) {
      if (error?.code !== "ENOENT") throw error
      const hint = profile.installHint === undefined ? "" : `. ${profile.installHint}`
      throw new Error(`ACP Agent command "${launch.command}" was not found${hint}`, { cause: error })
    }
    spans?.point(sessionSpanId, "sandbox.process", { "execution.id": child.id, state: "started" }, { command: commandLine })
    handle = acpSessionStartExternal(JSON.stringify(sessionConfig(launch, ctx, cwd, [], null)), child.id)
  } catch (error) {
    const failures = []
    if (child !== undefined) await child.kill().catch((kill) => failures.push(kill))
    if (relay !== undefined) failures.push(...(await relay.close()).map((message) => new Error(message)))
    bridge.release()
    owned.abort()
    const state = stateDirectory === undefined ? [] : await removeGuestState(name, sandbox, stateDirectory)
    failures.push(...state.map((message) => new Error(message)))
    if (failures.length > 0) {
      throw new AggregateError([error, ...failures], `Agent provider "${name}" ACP session cleanup failed`)
    }
    throw error
  }
  const pump = pumpSandboxProcess(handle, child)
  const release = async () => {
    const resourceErrors = relay === undefined ? [] : await relay.close()
    bridge.release()
    owned.abort()
    resourceErrors.push(...(await removeGuestState(name, sandbox, stateDirectory)))
    return { resourceErrors, sessionErrors: pump.killErrors }
  }
  return { handle, launch, release, waitFailure: pump.waitFailure }
}

async function openSession(profile, request, context, spans, sessionSpanId) {
  const parts = readRequest(profile, request, context)
  const opened =
    context.sandbox === undefined
      ? await openLocal(profile, request, context, parts)
      : await openInSandbox(profile, request, context, parts, spans, sessionSpanId)
  const { handle, launch, release, waitFailure } = opened
  const structured =
    parts.submission === undefined
      ? undefined
      : { instruction: launch.structuredOutputInstruction ?? DEFAULT_INSTRUCTION, submission: parts.submission }
  const session = new AcpSession(handle, spans, sessionSpanId, launch, profile.name, profile.installHint, release, structured, waitFailure)
  await session.open(context.signal)
  return session
}

async function run(profile, request, context) {
  const name = profile.name
  const turns = createAgentProviderTurns(request, name)
  const signal = context.signal
  if (signal.aborted) throw signal.reason
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
