// localSandbox (INVENTORY BS-1): trusted host execution inside a Workspace directory. Logical
// root and cwd are resolved with real paths and must be directories inside the Workspace
// (symlinks cannot lead out), commands are literal (no shell except the explicit `setup`),
// and every exec()/spawn() is refused under read-only access because host processes cannot
// enforce it. This is path hygiene for trusted work, not isolation.

import { randomUUID } from "node:crypto"
import { realpath, stat } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"

import { spawnLocalProcess } from "./local-process.js"
import { isNormalized } from "./normalized.js"
import { SandboxCommand } from "./sandbox-provider.js"

const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024
const READ_ONLY = "Local Sandbox cannot execute under read-only access because host processes cannot enforce it"

function optionString(value, name) {
  if (value === undefined) return undefined
  if (!isNormalized(value) || value.includes("\0")) {
    throw new TypeError(`Local Sandbox ${name} must be a non-empty normalized string`)
  }
  return value
}

function readOptions(options) {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError("Local Sandbox options must be an object")
  }
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes <= 0) {
    throw new RangeError("Local Sandbox maxOutputBytes must be a positive safe integer")
  }
  const setup = optionString(options.setup, "setup")
  const workspace = optionString(options.workspace, "workspace")
  return { maxOutputBytes, setup, workspace: workspace === undefined ? undefined : resolve(workspace) }
}

function within(path, boundary) {
  const rel = relative(boundary, path)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** The real path of `path`, which must be a directory inside `boundary` (when given). */
async function realDirectory(label, path, boundary) {
  let real
  try {
    real = await realpath(path)
  } catch {
    // A missing path is not a directory; its escape cannot be judged without a real path.
    throw new Error(`Local Sandbox ${label} must be a directory`)
  }
  if (boundary !== undefined && !within(real, boundary)) {
    throw new Error(`Local Sandbox ${label} resolves outside its configured boundary`)
  }
  if (!(await stat(real)).isDirectory()) throw new Error(`Local Sandbox ${label} must be a directory`)
  return real
}

/** Reads both streams against one shared byte budget; resolves with the decoded texts. */
async function collect(child, maxOutputBytes) {
  let total = 0
  let overflow = false
  const read = async (stream) => {
    const chunks = []
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > maxOutputBytes || overflow) {
        if (!overflow) {
          overflow = true
          await child.kill()
        }
        await reader.cancel()
        break
      }
      chunks.push(value)
    }
    return Buffer.concat(chunks).toString("utf8")
  }
  const [stdout, stderr] = await Promise.all([read(child.stdout), read(child.stderr)])
  return { overflow, stderr, stdout }
}

/** One literal host command: stdin closed, bounded output, exit code as a result. */
async function execLocal(command, args, options, maxOutputBytes, processes) {
  const child = await spawnLocalProcess(command, args, options)
  processes.add(child)
  try {
    // Settled eagerly so an overflow kill's rejection is never unhandled.
    const waited = child.wait().then(
      (exit) => ({ exit }),
      (error) => ({ error }),
    )
    await child.stdin.close().catch(() => {})
    const output = await collect(child, maxOutputBytes)
    const outcome = await waited
    if (output.overflow) throw new RangeError(`Local Sandbox command output exceeded ${maxOutputBytes} bytes`)
    if (outcome.error !== undefined) throw outcome.error
    return { exitCode: outcome.exit.exitCode, stderr: output.stderr, stdout: output.stdout }
  } finally {
    processes.delete(child)
  }
}

async function killAll(processes) {
  const errors = []
  for (const child of [...processes]) {
    try {
      await child.kill()
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
    const result = await execLocal("sh", ["-lc", setup], { cwd: root, signal }, maxOutputBytes, processes)
    if (result.exitCode !== 0) {
      throw new Error(`Local Sandbox setup failed with exit code ${result.exitCode}: ${result.stderr.trim()}`)
    }
  }

  /** Validates a runtime call and resolves its physical cwd inside the root. */
  const prepare = async (command, args, options) => {
    if (request.access === "read-only") throw new Error(READ_ONLY)
    const sandboxCommand = SandboxCommand.from(request, command, args, options)
    const cwd = await realDirectory("command cwd", join(boundary, sandboxCommand.cwd), root)
    const launch = { cwd, env: sandboxCommand.env, signal: sandboxCommand.signal }
    if (sandboxCommand.timeoutMs !== undefined) launch.timeoutMs = sandboxCommand.timeoutMs
    return { args: [...sandboxCommand.args], command: sandboxCommand.command, launch }
  }
  const runtime = Object.freeze({
    access: request.access,
    cwd: request.cwd,
    root: request.root,
    async exec(command, args, options) {
      const prepared = await prepare(command, args, options)
      return execLocal(prepared.command, prepared.args, prepared.launch, maxOutputBytes, processes)
    },
    async spawn(command, args, options) {
      const prepared = await prepare(command, args, options)
      const child = await spawnLocalProcess(prepared.command, prepared.args, prepared.launch)
      processes.add(child)
      const forget = () => processes.delete(child)
      child.wait().then(forget, forget)
      return child
    },
  })
  let releasing
  return Object.freeze({
    handle: Object.freeze({ directory: boundary, kind: "local" }),
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
