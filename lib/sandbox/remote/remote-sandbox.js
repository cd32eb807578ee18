// The lifecycle shared by the transfer-based Sandboxes (BS-3 Daytona, BS-4 Modal): resolve
// the Workspace source, create the remote Sandbox (not abortable: one that appears after an
// abort is destroyed), hydrate it (Rust packs the root, the archive is uploaded and
// extracted under the guest root), run `setup`, serve exec/spawn below the guest root
// (refused under read-only access), and on release reconcile a read-write tree (download
// the remote archive, Rust mirrors it into the host root) before destroying the Sandbox.
// `maxOutputBytes` bounds the output of `exec()`/`spawn()` and `setup`, never the
// Workspace transfer (lib/sandbox/remote/transfer.js bounds that).
//
// A provider is an `adapter` over its SDK (lib/sandbox/remote/daytona.js, lib/sandbox/remote/modal.js):
// { label, guestRoot, create(), destroy(sb), run(sb, argv, opts), upload(sb, path, bytes),
//   download(sb, path), spawn(sb, argv, opts) }.

import { randomUUID } from "node:crypto"
import { join } from "node:path"

import { mirrorArchive, packTree } from "./transfer.js"
import { remoteProcess } from "./process.js"
import { stopWhen } from "../../process/stop-when.js"
import { hostDirectoryResolve } from "../../core/native.js"
import { SandboxCommand } from "../provider.js"
import { guestCwd } from "../portable-path.js"
import { killGroupScript } from "../guest-group.js"

/** The documented default image both hosted providers share (INVENTORY BS-3, BS-4). */
export const DEFAULT_IMAGE = "wearesingular/aml-agent-sandbox:latest"

/** An optional non-empty string option of the provider labelled `label`. */
export function optionString(label, value, name) {
  if (value === undefined) return undefined
  if (typeof value !== "string" || value.trim() === "") throw new TypeError(`${label} ${name} must be a non-empty string`)
  return value
}

/** `'…'` for a POSIX shell. */
export function shellQuote(value) {
  return `'${String(value).replace(/'/g, "'\\''")}'`
}

const isReal = (found) => found.real !== null && found.real !== undefined

/** The real host root to transfer; the rule is crates/aml-files/src/host_path.rs. */
async function resolveSource(label, directory, request) {
  const top = await hostDirectoryResolve(directory, [])
  if (!isReal(top)) throw new Error(`${label} root must be a directory`)
  const boundary = top.real
  const found = await hostDirectoryResolve(join(boundary, request.root), [boundary])
  if (!isReal(found) || !found.directory) throw new Error(`${label} root must be a directory`)
  if (!found.inside[0]) throw new Error(`${label} root resolves outside its configured boundary`)
  const root = found.real
  const cwd = await hostDirectoryResolve(join(boundary, request.cwd), [root])
  if (isReal(cwd) && !cwd.inside[0]) throw new Error(`${label} cwd resolves outside its configured boundary`)
  return root
}

/** The guest cwd (lib/sandbox/portable-path.js); a cwd outside the root never reaches the guest. */
function guestPath(guestRoot, root, cwd, label) {
  const path = guestCwd(guestRoot, root, cwd)
  if (path === undefined) throw new Error(`${label} cwd cannot escape its root`)
  return path
}

/** Runs `fn`; if the Sandbox must go too, aggregates a destroy failure under `message`. */
async function destroyAfter(adapter, sandbox, error, message) {
  try {
    await adapter.destroy(sandbox)
  } catch (cleanup) {
    throw new AggregateError([error, cleanup], message)
  }
  throw error
}

async function hydrate(adapter, sandbox, source) {
  const label = `${adapter.label} Workspace hydration failed`
  const archive = await packTree(source, label)
  const remote = `/tmp/aml-hydrate-${randomUUID()}.tar.gz`
  try {
    await adapter.upload(sandbox, remote, archive)
  } catch (error) {
    throw new Error(`${label}: ${error?.message ?? String(error)}`, { cause: error })
  }
  const root = shellQuote(adapter.guestRoot)
  const script = `rm -rf ${root} && mkdir -p ${root} && tar -xzf ${shellQuote(remote)} -C ${root} && rm -f ${shellQuote(remote)}`
  const result = await adapter.run(sandbox, ["sh", "-c", script], {})
  if (result.exitCode !== 0) throw commandFailed(adapter, "Workspace hydration", result)
}

/** `<Label> <step> failed with exit code <n>: <output>` for a failed remote transfer command. */
function commandFailed(adapter, step, result) {
  return new Error(`${adapter.label} ${step} failed with exit code ${result.exitCode}: ${(result.stderr || result.stdout).trim()}`)
}

async function reconcile(adapter, sandbox, source) {
  const label = `${adapter.label} Workspace reconciliation failed`
  const remote = `/tmp/aml-reconcile-${randomUUID()}.tar.gz`
  // A bare `tar -cf`, no shell and no compressor: the image needs only `tar` to archive.
  const result = await adapter.run(sandbox, ["tar", "-cf", remote, "-C", adapter.guestRoot, "."], {})
  if (result.exitCode !== 0) throw commandFailed(adapter, "Workspace reconciliation", result)
  let archive
  try {
    archive = await adapter.download(sandbox, remote)
  } catch (error) {
    throw new Error(`${label}: ${error?.message ?? String(error)}`, { cause: error })
  }
  await mirrorArchive(archive, source, label)
}

/** Creation cannot be aborted: an abort rejects at once and destroys the late Sandbox. */
function createRacing(adapter, request) {
  const signal = request.signal
  // Aborted before creation started (during the source checks): create nothing. A listener
  // added to an aborted signal never fires, so this was a promise that never settled.
  if (signal?.aborted) return Promise.reject(signal.reason)
  const creating = adapter.create(request)
  if (signal === undefined) return creating
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason)
      creating.then((late) => adapter.destroy(late)).catch(() => {})
    }
    signal.addEventListener("abort", onAbort, { once: true })
    creating.then(
      (sandbox) => {
        signal.removeEventListener("abort", onAbort)
        if (signal.aborted) return
        resolve(sandbox)
      },
      (error) => {
        signal.removeEventListener("abort", onAbort)
        if (!signal.aborted) reject(error)
      },
    )
  })
}

/**
 * Runs one command with the output budget. An abort or a timeout destroys the Sandbox:
 * not every remote operation can be cancelled on its own.
 */
async function runBounded(adapter, state, argv, options, config) {
  const signal = options.signal
  if (signal?.aborted) throw signal.reason
  let disarm
  const stopped = new Promise((_, reject) => {
    disarm = stopWhen(signal, options.timeoutMs, (reason, cause) =>
      reject(cause === "abort" ? reason : new DOMException(`${adapter.label} command timed out after ${options.timeoutMs} ms`, "TimeoutError")),
    )
  })
  stopped.catch(() => {})
  // An adapter that streams output stops reading at the budget (`{ exceeded: true }`); one
  // whose API answers whole (Daytona) is checked below, once the answer arrived.
  const running = Promise.resolve(adapter.run(state.sandbox, argv, { ...options, outputLimit: config.maxOutputBytes }))
  running.catch(() => {})
  let result
  try {
    result = await Promise.race([running, stopped])
  } catch (error) {
    if ((signal?.aborted && error === signal.reason) || (error instanceof DOMException && error.name === "TimeoutError")) {
      state.dead = true
      return destroyAfter(adapter, state.sandbox, error, `${adapter.label} command and cleanup failed`)
    }
    throw error
  } finally {
    disarm()
  }
  const exceeded = result.exceeded === true || Buffer.byteLength(result.stdout) + Buffer.byteLength(result.stderr) > config.maxOutputBytes
  if (exceeded) throw new RangeError(`${adapter.label} command output exceeded ${config.maxOutputBytes} bytes`)
  return { exitCode: result.exitCode, stderr: result.stderr, stdout: result.stdout }
}

export async function acquireRemote(adapter, request, config) {
  const label = adapter.label
  const signal = request.signal
  if (signal.aborted) throw signal.reason
  const directory = request.workspace?.directory ?? config.workspace
  if (directory === undefined) throw new TypeError(`${label} requires an active Workspace or configured workspace`)
  const source = await resolveSource(label, directory, request)
  const sandbox = await createRacing(adapter, request)
  const state = { sandbox, dead: false }
  try {
    await hydrate(adapter, sandbox, source)
    if (config.setup !== undefined) {
      const result = await runBounded(adapter, state, ["sh", "-lc", config.setup], { cwd: guestPath(adapter.guestRoot, request.root, request.cwd, label), env: {}, signal }, config)
      if (result.exitCode !== 0) throw new Error(`${label} setup failed with exit code ${result.exitCode}: ${adapter.setupDetail(result)}`)
    }
    if (signal.aborted) throw signal.reason
  } catch (error) {
    if (state.dead) throw error
    return destroyAfter(adapter, sandbox, error, `${label} acquisition and cleanup failed`)
  }
  const readOnly = `${label} cannot execute under read-only access because its transferred Workspace is not mounted read-only`
  const prepare = (command, args, options) => {
    if (request.access === "read-only") throw new Error(readOnly)
    const sandboxCommand = SandboxCommand.from(request, command, args, options)
    return {
      argv: [sandboxCommand.command, ...sandboxCommand.args],
      options: { cwd: guestPath(adapter.guestRoot, request.root, sandboxCommand.cwd, label), env: sandboxCommand.env, signal: sandboxCommand.signal, timeoutMs: sandboxCommand.timeoutMs },
    }
  }
  const runtime = Object.freeze({
    access: request.access,
    cwd: request.cwd,
    root: request.root,
    async exec(command, args, options) {
      const prepared = prepare(command, args, options)
      return runBounded(adapter, state, prepared.argv, prepared.options, config)
    },
    async spawn(command, args, options) {
      const prepared = prepare(command, args, options)
      const kill = (marker) => adapter.run(sandbox, ["sh", "-c", killGroupScript(marker)], {})
      return remoteProcess(adapter, sandbox, prepared, config, kill)
    },
  })
  let releasing
  const release = () => {
    releasing ??= (async () => {
      let failure
      if (request.access === "read-write" && !state.dead) {
        try {
          await reconcile(adapter, sandbox, source)
        } catch (error) {
          failure = error
        }
      }
      if (failure !== undefined) return destroyAfter(adapter, sandbox, failure, `${label} reconciliation and cleanup failed`)
      if (!state.dead) await adapter.destroy(sandbox)
    })()
    return releasing
  }
  return Object.freeze({ handle: Object.freeze({ kind: adapter.kind, sandbox }), id: adapter.leaseId(sandbox), release, runtime })
}
