// dockerSandbox (INVENTORY BS-2): one disposable container per lease from a named image,
// the Workspace root bind-mounted at /workspace (`:ro` under read-only access, which is why
// exec and spawn stay allowed then), commands as execs, removal on release, timeout or
// cancellation. The daemon is spoken to over its Unix socket (lib/sandbox/docker/engine.js,
// crates/aml-docker); failures keep the CLI-era wording `Docker command failed: …`.

import { randomUUID } from "node:crypto"
import { join, resolve } from "node:path"

import { commandFailed, dockerEngine } from "./engine.js"
import { spawnDockerProcess } from "./process.js"
import {
  cancellationCancel,
  cancellationCreate,
  cancellationRelease,
  dockerExec,
  dockerRemove,
  dockerRun,
  hostDirectoryResolve,
} from "../../core/native.js"
import { checkOptionsRecord, maxOutputBytesOption, normalizedOption } from "../options.js"
import { registerHostFiles } from "../host-files.js"
import { SandboxCommand } from "../provider.js"
import { isTimerDelay } from "../../checks/timer-delay.js"
import { guestCwd } from "../portable-path.js"

const DEFAULT_IMAGE = "wearesingular/aml-agent-sandbox:latest"
const GUEST_ROOT = "/workspace"
// The container's main process: a shell that sleeps until the container is removed.
const KEEPALIVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

const LABEL = "Docker Sandbox"
const optionString = (value, name) => normalizedOption(LABEL, value, name)

function readOptions(options) {
  checkOptionsRecord(LABEL, options)
  const maxOutputBytes = maxOutputBytesOption(LABEL, options.maxOutputBytes)
  const workspace = optionString(options.workspace, "workspace")
  return {
    image: optionString(options.image, "image") ?? DEFAULT_IMAGE,
    maxOutputBytes,
    setup: optionString(options.setup, "setup"),
    user: optionString(options.user, "user"),
    workspace: workspace === undefined ? undefined : resolve(workspace),
  }
}

const isReal = (found) => found.real !== null && found.real !== undefined

/**
 * The real host root (the bind source) and the guest cwd, checked against the Workspace;
 * the rule is crates/aml-files/src/host_path.rs.
 */
async function resolveMount(directory, request) {
  const top = await hostDirectoryResolve(directory, [])
  if (!isReal(top)) throw new Error("Docker Sandbox root must be a directory")
  const boundary = top.real
  const found = await hostDirectoryResolve(join(boundary, request.root), [boundary])
  if (!isReal(found)) throw new Error("Docker Sandbox root must be a directory")
  if (!found.inside[0]) throw new Error("Docker Sandbox root resolves outside its configured boundary")
  if (!found.directory) throw new Error("Docker Sandbox root must be a directory")
  const root = found.real
  // A cwd that does not exist yet is created by Docker (`--workdir`); one that exists must
  // stay inside the root after following links.
  const cwd = await hostDirectoryResolve(join(boundary, request.cwd), [boundary, root])
  if (isReal(cwd)) {
    if (!cwd.inside[0]) throw new Error("Docker Sandbox cwd resolves outside its configured boundary")
    if (!cwd.inside[1]) throw new Error("Docker Sandbox cwd cannot escape its root")
  }
  return { root, guestCwd: guestPath(request.root, request.cwd) }
}

/** `/workspace/<cwd relative to the logical root>`. */
function guestPath(root, cwd) {
  const path = guestCwd(GUEST_ROOT, root, cwd)
  if (path === undefined) throw new Error("Docker Sandbox cwd cannot escape its root")
  return path
}

/** Container names allow `[a-zA-Z0-9_.-]`; anything else in the evaluation id becomes `-`. */
function containerName(evaluationId) {
  const prefix = String(evaluationId).slice(0, 12).replace(/[^a-zA-Z0-9_.-]/g, "-")
  return `aml-${prefix}-${randomUUID().slice(0, 8)}`
}

function cleanupFailed(fault) {
  return new Error(`Docker Sandbox cleanup failed: ${fault.message}`)
}

/** Removes `id`; resolves the cleanup error (or undefined), never rejects. */
async function removeContainer(engine, id) {
  try {
    const outcome = await dockerRemove(engine.socket, engine.version, id)
    return outcome.fault ? cleanupFailed(outcome.fault) : undefined
  } catch (error) {
    return cleanupFailed(error)
  }
}

/** Throws `error`, or both as the documented aggregate when the removal failed too. */
async function failAndRemove(engine, id, error, message = "Docker Sandbox startup and cleanup failed") {
  const cleanup = await removeContainer(engine, id)
  if (cleanup !== undefined) throw new AggregateError([error, cleanup], message)
  throw error
}

async function startContainer(engine, config, request, mount) {
  const access = request.access === "read-only" ? ":ro" : ""
  const name = containerName(request.evaluationId)
  const spec = {
    name,
    image: config.image,
    user: config.user ?? null,
    binds: [`${mount.root}:${GUEST_ROOT}${access}`],
    workingDir: mount.guestCwd,
    entrypoint: ["sh"],
    cmd: ["-c", KEEPALIVE],
    labels: [["dev.aml-jsx.sandbox", "docker"]],
  }
  const started = await dockerRun(engine.socket, engine.version, JSON.stringify(spec))
  const failure = (detail) => new Error(`Docker Sandbox failed to start image "${config.image}": ${detail}`)
  if (started.id === "" || started.id === null || started.id === undefined) {
    // Nothing answered with an id: remove by name in case a container exists after all.
    const error = started.fault ? failure(started.fault.message) : new Error("Docker Sandbox started without returning a container id")
    // A daemon that cannot be reached created nothing; anything else may have.
    if (started.fault?.kind === "connect") throw error
    return failAndRemove(engine, name, error)
  }
  if (!started.started) return failAndRemove(engine, started.id, failure(started.fault.message))
  return started.id
}

/** One exec to completion; timeouts, cancellation and overflow remove the container. */
async function execIn(engine, lease, spec, launch) {
  const signal = launch.signal
  if (signal?.aborted) throw signal.reason
  const token = cancellationCreate()
  const cancel = () => cancellationCancel(token)
  signal?.addEventListener("abort", cancel, { once: true })
  const body = JSON.stringify({ cmd: spec.argv, env: spec.env, workingDir: spec.workingDir })
  let outcome
  try {
    outcome = await dockerExec(engine.socket, engine.version, lease.id, body, launch.timeoutMs, launch.maxOutputBytes, token)
  } catch (error) {
    cancellationRelease(token)
    throw error
  } finally {
    signal?.removeEventListener("abort", cancel)
  }
  const fault = outcome.fault
  if (fault === null || fault === undefined) {
    return { exitCode: outcome.exitCode, stderr: outcome.stderr.toString("utf8"), stdout: outcome.stdout.toString("utf8") }
  }
  let error
  // Only the command's signal cancels a Docker exec (src/process/docker.rs token).
  if (fault.kind === "cancelled") error = signal.reason
  else if (fault.kind === "timeout") error = new DOMException(`Docker Sandbox command timed out after ${launch.timeoutMs} ms`, "TimeoutError")
  else if (fault.kind === "output-limit") error = new RangeError(`Docker Sandbox command output exceeded ${launch.maxOutputBytes} bytes`)
  else throw commandFailed(fault)
  // The command may outlive its exec connection inside the container: the container goes.
  lease.dead = true
  return failAndRemove(engine, lease.id, error, "Docker Sandbox command and cleanup failed")
}

function execEnv(env) {
  return Object.entries(env).map(([key, value]) => `${key}=${value}`)
}

function readTimeout(options) {
  const timeoutMs = options?.timeoutMs
  if (timeoutMs !== undefined && !isTimerDelay(timeoutMs)) {
    throw new RangeError("Docker Sandbox timeoutMs must be a positive timer-safe integer")
  }
}

function createRuntime(engine, config, request, lease) {
  const prepare = (command, args, options) => {
    if (options !== null && typeof options === "object") readTimeout(options)
    const sandboxCommand = SandboxCommand.from(request, command, args, options)
    return {
      command: sandboxCommand.command,
      args: [...sandboxCommand.args],
      env: execEnv(sandboxCommand.env),
      workingDir: guestPath(request.root, sandboxCommand.cwd),
      launch: { maxOutputBytes: config.maxOutputBytes, signal: sandboxCommand.signal, timeoutMs: sandboxCommand.timeoutMs },
    }
  }
  const oneShot = (argv) =>
    execIn(engine, lease, { argv, env: [], workingDir: GUEST_ROOT }, { maxOutputBytes: config.maxOutputBytes })
  return Object.freeze({
    access: request.access,
    cwd: request.cwd,
    root: request.root,
    async exec(command, args, options) {
      const spec = prepare(command, args, options)
      return execIn(engine, lease, { ...spec, argv: [spec.command, ...spec.args] }, spec.launch)
    },
    async spawn(command, args, options) {
      const spec = prepare(command, args, options)
      const { child, state } = await spawnDockerProcess(engine, lease.id, spec, spec.launch, oneShot)
      lease.processes.add(state)
      return child
    },
  })
}

async function acquireDocker(request, config) {
  const signal = request.signal
  if (signal.aborted) throw signal.reason
  const directory = request.workspace?.directory ?? config.workspace
  if (directory === undefined) throw new TypeError("Docker Sandbox requires an active Workspace or configured workspace")
  const mount = await resolveMount(directory, request)
  let engine
  try {
    engine = await dockerEngine()
  } catch (error) {
    throw new Error(`Docker Sandbox failed to start image "${config.image}": ${error.message}`)
  }
  const id = await startContainer(engine, config, request, mount)
  const lease = { id, dead: false, processes: new Set() }
  if (signal.aborted) return failAndRemove(engine, id, signal.reason)
  if (config.setup !== undefined) {
    const setup = { argv: ["sh", "-lc", config.setup], env: [], workingDir: mount.guestCwd }
    let result
    try {
      result = await execIn(engine, lease, setup, { maxOutputBytes: config.maxOutputBytes, signal })
    } catch (error) {
      if (lease.dead) throw error
      return failAndRemove(engine, id, error)
    }
    if (result.exitCode !== 0) {
      const error = new Error(`Docker Sandbox setup failed with exit code ${result.exitCode}: ${result.stderr.trim()}`)
      return failAndRemove(engine, id, error)
    }
  }
  let releasing
  const release = () => {
    releasing ??= (async () => {
      const cleanup = await removeContainer(engine, id)
      for (const state of lease.processes) state.release()
      if (cleanup !== undefined) throw cleanup
    })()
    return releasing
  }
  const handle = Object.freeze({ containerId: id, kind: "docker" })
  // The guest's /workspace is a bind mount of the host root: <File> and <Include path> work
  // from the host beneath it, so a link the container plants cannot redirect them.
  registerHostFiles(handle, mount.root, request.root)
  return Object.freeze({
    handle,
    id,
    release,
    runtime: createRuntime(engine, config, request, lease),
  })
}

/** A SandboxProvider named "docker": one disposable container per lease. */
export function dockerSandbox(options = {}) {
  const config = readOptions(options)
  return Object.freeze({
    name: "docker",
    acquire(request) {
      return acquireDocker(request, config)
    },
  })
}
