// localSandbox (INVENTORY BS-1): trusted host execution inside a Workspace directory. Logical
// root and cwd are resolved with real paths and must be directories inside the Workspace
// (symlinks cannot lead out), commands are literal (no shell except the explicit `setup`),
// and every exec()/spawn() is refused under read-only access because host processes cannot
// enforce it. This is path hygiene for trusted work, not isolation.

import { randomUUID } from "node:crypto"
import { join, resolve } from "node:path"

import { childEnv, signalName, spawnError } from "../../process/host-process.js"
import { spawnLocalProcess } from "../../process/local-process.js"
import { cancellationCancel, cancellationCreate, cancellationRelease, hostDirectoryResolve, processExec } from "../../core/native.js"
import { checkOptionsRecord, maxOutputBytesOption, normalizedOption } from "../options.js"
import { registerHostFiles } from "../host-files.js"
import { SandboxCommand } from "../provider.js"

const PIPES_FAILED = "Local process transport failed to create process pipes"
const READ_ONLY = "Local Sandbox cannot execute under read-only access because host processes cannot enforce it"

const LABEL = "Local Sandbox"

function readOptions(options) {
  checkOptionsRecord(LABEL, options)
  const maxOutputBytes = maxOutputBytesOption(LABEL, options.maxOutputBytes)
  const setup = normalizedOption(LABEL, options.setup, "setup")
  const workspace = normalizedOption(LABEL, options.workspace, "workspace")
  return { maxOutputBytes, setup, workspace: workspace === undefined ? undefined : resolve(workspace) }
}

/**
 * The real path of `path`, which must be a directory inside `boundary` (when given); the
 * rule is crates/aml-files/src/host_path.rs.
 */
async function realDirectory(label, path, boundary) {
  const found = await hostDirectoryResolve(path, boundary === undefined ? [] : [boundary])
  // The messages are the documented, exact ones; the cause names the path, which they do not.
  const notDirectory = () =>
    new Error(`Local Sandbox ${label} must be a directory`, {
      cause: new Error(`${found.real === null || found.real === undefined ? "no such directory" : "not a directory"}: ${path}`),
    })
  // A missing path is not a directory; its escape cannot be judged without a real path.
  if (found.real === null || found.real === undefined) throw notDirectory()
  if (boundary !== undefined && !found.inside[0]) {
    throw new Error(`Local Sandbox ${label} resolves outside its configured boundary`)
  }
  if (!found.directory) throw notDirectory()
  return found.real
}

/** What a tracked exec reports when its lease was released while it ran. */
const RELEASED = "Local Sandbox lease was released while the command ran"

/**
 * A timeout of the process runtime, named like the DOMException `AbortSignal.timeout()`
 * uses, so `<Script>` can report it as its own timeout.
 */
function timedOut(timeoutMs) {
  return new DOMException(`Local Sandbox command timed out after ${timeoutMs} ms`, "TimeoutError")
}

function execFailure(command, args, launch, fault) {
  switch (fault.kind) {
    case "cancelled":
      return launch.signal?.aborted ? launch.signal.reason : new Error(RELEASED)
    case "output-limit":
      return new RangeError(`Local Sandbox command output exceeded ${launch.maxOutputBytes} bytes`)
    case "timeout":
      return timedOut(launch.timeoutMs)
    case "spawn":
      return spawnError(command, args, launch.cwd, fault)
    default:
      return new Error(PIPES_FAILED, { cause: new Error(fault.message) })
  }
}

/**
 * One literal host command, run by the process supervisor in one native call (the same
 * path as a host `<Script>`): stdin closed, stdout+stderr under one shared byte budget,
 * the timeout, and cancellation through a token, each reported only once the whole tree is
 * dead and reaped. The run is tracked in `processes` from the moment it exists, so a
 * release (also one forced by an abort) stops and reaps it before it resolves.
 */
function execLocal(command, args, launch, processes) {
  const signal = launch.signal
  if (signal?.aborted) return Promise.reject(signal.reason)
  const argv = [...args]
  const token = cancellationCreate()
  const cancel = () => cancellationCancel(token)
  let running
  try {
    const env = childEnv(launch.env, launch.cwd)
    running = processExec(command, argv, launch.cwd, env, launch.timeoutMs, launch.maxOutputBytes, token)
  } catch (error) {
    cancellationRelease(token)
    return Promise.reject(error)
  }
  signal?.addEventListener("abort", cancel, { once: true })
  const settled = running.then(
    (outcome) => ({ outcome }),
    (error) => ({ error }),
  )
  const tracked = { kill: () => (cancel(), settled.then(() => undefined)) }
  processes.add(tracked)
  return settled.then(({ error, outcome }) => {
    signal?.removeEventListener("abort", cancel)
    processes.delete(tracked)
    if (error !== undefined) throw error
    const fault = outcome.fault
    if (fault !== undefined && fault !== null) throw execFailure(command, argv, launch, fault)
    if (outcome.signal !== null && outcome.signal !== undefined) {
      throw new Error(`Local process exited from signal ${signalName(outcome.signal)}`)
    }
    return { exitCode: outcome.exitCode, stderr: outcome.stderr.toString("utf8"), stdout: outcome.stdout.toString("utf8") }
  })
}

/**
 * A spawned process, tracked while it is still starting: a release that lands before the
 * spawn settled waits for it and kills the new tree, instead of missing it.
 */
async function spawnTracked(command, args, launch, processes) {
  const starting = spawnLocalProcess(command, args, launch)
  const tracked = { kill: () => starting.then((child) => child.kill(), () => undefined) }
  processes.add(tracked)
  let child
  try {
    child = await starting
  } catch (error) {
    processes.delete(tracked)
    throw error
  }
  const forget = () => processes.delete(tracked)
  child.wait().then(forget, forget)
  return child
}

async function killAll(processes) {
  const errors = []
  for (const tracked of [...processes]) {
    try {
      await tracked.kill()
    } catch (error) {
      errors.push(error)
    }
  }
  processes.clear()
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, "Process cleanup failed")
}

async function acquireLocal(request, config) {
  const signal = request.signal
  if (signal.aborted) throw signal.reason
  const directory = request.workspace?.directory ?? config.workspace
  if (directory === undefined) throw new TypeError("Local Sandbox requires an active Workspace or configured workspace")
  // The Workspace directory is the root "." itself, so a missing one is a missing root.
  const boundary = await realDirectory("root", directory, undefined)
  const root = await realDirectory("root", join(boundary, request.root), boundary)
  await realDirectory("cwd", join(boundary, request.cwd), root)
  const processes = new Set()
  const { maxOutputBytes, setup } = config
  if (setup !== undefined) {
    const result = await execLocal("sh", ["-lc", setup], { cwd: root, maxOutputBytes, signal }, processes)
    if (result.exitCode !== 0) {
      throw new Error(`Local Sandbox setup failed with exit code ${result.exitCode}: ${result.stderr.trim()}`)
    }
  }

  /** Validates a runtime call and resolves its physical cwd inside the root. */
  const prepare = async (command, args, options) => {
    if (request.access === "read-only") throw new Error(READ_ONLY)
    const sandboxCommand = SandboxCommand.from(request, command, args, options)
    const cwd = await realDirectory("command cwd", join(boundary, sandboxCommand.cwd), root)
    const launch = { cwd, env: sandboxCommand.env, maxOutputBytes, signal: sandboxCommand.signal }
    if (sandboxCommand.timeoutMs !== undefined) launch.timeoutMs = sandboxCommand.timeoutMs
    return { args: [...sandboxCommand.args], command: sandboxCommand.command, launch }
  }
  const runtime = Object.freeze({
    access: request.access,
    cwd: request.cwd,
    root: request.root,
    async exec(command, args, options) {
      const prepared = await prepare(command, args, options)
      return execLocal(prepared.command, prepared.args, prepared.launch, processes)
    },
    async spawn(command, args, options) {
      const prepared = await prepare(command, args, options)
      return spawnTracked(prepared.command, prepared.args, prepared.launch, processes)
    },
  })
  let releasing
  const handle = Object.freeze({ directory: boundary, kind: "local" })
  // The guest's files are host files: <File> and <Include path> work beneath `root` from here.
  registerHostFiles(handle, root, request.root)
  return Object.freeze({
    handle,
    id: `local:${randomUUID()}`,
    // Release writes nothing back (the files are already in place): it reclaims processes.
    release() {
      releasing ??= killAll(processes)
      return releasing
    },
    runtime,
  })
}

/** A SandboxProvider named "local" that runs trusted host processes in a Workspace directory. */
export function localSandbox(options = {}) {
  const config = readOptions(options)
  return Object.freeze({
    name: "local",
    acquire(request) {
      return acquireLocal(request, config)
    },
  })
}
