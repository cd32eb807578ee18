// modalSandbox (INVENTORY BS-4): a disposable Modal Sandbox per lease from a registry image,
// the Workspace transferred into `/workspace` (lib/sandbox/remote/remote-sandbox.js). The SDK (`modal`
// >= 0.9, an optional peer) is imported on first use unless a `client` is given. The SDK
// surface used (docs/SANDBOX.md lists it; __test__/support/remote-sandbox-fakes.ts is
// type-checked against the published types):
//   client.apps.fromName(appName, { createIfMissing: true }) → app
//   client.images.fromRegistry(image) → image
//   client.sandboxes.create(app, image, create) → sandbox (not abortable)
//   sandbox.exec(argv, { workdir, env, timeoutMs, mode, stdout: "pipe", stderr: "pipe" }) →
//     process with stdin (a WritableStream with writeBytes), stdout/stderr ReadableStreams,
//     wait() → exit code
//   sandbox.filesystem.copyFromLocal(localPath, remotePath),
//     sandbox.filesystem.copyToLocal(remotePath, localPath): whole files through a host file
//   sandbox.terminate(); sandbox.sandboxId

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

import { DEFAULT_IMAGE, acquireRemote, optionString } from "./remote-sandbox.js"
import { checkOptionsRecord, maxOutputBytesOption } from "../options.js"
import { optionalPeer } from "../../core/optional-peer.js"

const LABEL = "Modal Sandbox"

function readOptions(options) {
  checkOptionsRecord(LABEL, options)
  if (options.client !== undefined && options.config !== undefined) {
    throw new TypeError(`${LABEL} accepts either client or config, not both`)
  }
  const maxOutputBytes = maxOutputBytesOption(LABEL, options.maxOutputBytes)
  const workspace = optionString(LABEL, options.workspace, "workspace")
  return {
    appName: optionString(LABEL, options.appName, "appName") ?? "aml-jsx",
    client: options.client,
    config: options.config,
    create: options.create ?? {},
    image: optionString(LABEL, options.image, "image") ?? DEFAULT_IMAGE,
    maxOutputBytes,
    setup: optionString(LABEL, options.setup, "setup"),
    workspace: workspace === undefined ? undefined : resolve(workspace),
  }
}

/** The SDK, imported once on first use; a clear error names the missing package. */
const loadSdk = optionalPeer(
  () => import("modal"),
  (cause) => new Error(`${LABEL} requires the optional peer dependency "modal" (npm install modal) or an application-supplied client`, { cause }),
)

async function loadClient(config) {
  const { ModalClient } = await loadSdk()
  return new ModalClient(config)
}

/**
 * The text of `stream`; with a shared `budget` (`{ used, max }`), undefined as soon as the
 * streams together passed `max` bytes: the rest is cancelled, never buffered.
 */
async function readAllText(stream, budget) {
  const reader = stream.getReader()
  const chunks = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const bytes = Buffer.from(value)
    if (budget !== undefined) {
      budget.used += bytes.byteLength
      if (budget.used > budget.max) {
        await reader.cancel().catch(() => {})
        return undefined
      }
    }
    chunks.push(bytes)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/** Modal's exec parameters; `binary` for a spawned process, whose bytes must not be decoded. */
function execOptions(options, mode) {
  const params = { mode, stdout: "pipe", stderr: "pipe" }
  if (options.cwd !== undefined) params.workdir = options.cwd
  if (options.env !== undefined) params.env = { ...options.env }
  // Modal ends the process itself at the deadline; lib/sandbox/remote/remote-sandbox.js still races it.
  if (options.timeoutMs !== undefined) params.timeoutMs = options.timeoutMs
  return params
}

/** Runs `body(path)` with a path in a private host directory, removed afterwards. */
async function withHostFile(body) {
  const directory = await mkdtemp(join(tmpdir(), "aml-modal-transfer-"))
  try {
    return await body(join(directory, "archive.tar"))
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}

function adapter(config) {
  let client
  const getClient = async () => (client ??= config.client ?? (await loadClient(config.config)))
  return {
    label: LABEL,
    kind: "modal",
    guestRoot: "/workspace",
    leaseId: (sandbox) => `modal:${sandbox.sandboxId}`,
    setupDetail: (result) => result.stderr.trim(),
    async create() {
      const modal = await getClient()
      const app = await modal.apps.fromName(config.appName, { createIfMissing: true })
      const image = modal.images.fromRegistry(config.image)
      return modal.sandboxes.create(app, image, { ...config.create })
    },
    destroy: (sandbox) => sandbox.terminate(),
    // Modal's filesystem API copies whole files between host paths and Sandbox paths.
    upload: (sandbox, path, bytes) =>
      withHostFile(async (local) => {
        await writeFile(local, bytes, { mode: 0o600 })
        await sandbox.filesystem.copyFromLocal(local, path)
      }),
    download: (sandbox, path) =>
      withHostFile(async (local) => {
        await sandbox.filesystem.copyToLocal(path, local)
        return readFile(local)
      }),
    async run(sandbox, argv, options) {
      const child = await sandbox.exec(argv, execOptions(options, "text"))
      await child.stdin.close()
      const budget = options.outputLimit === undefined ? undefined : { used: 0, max: options.outputLimit }
      const reading = Promise.all([readAllText(child.stdout, budget), readAllText(child.stderr, budget)])
      const [stdout, stderr] = await reading
      // Past the budget, Modal's process API has no kill: the command is left to its
      // timeoutMs or to the Sandbox's termination at release, and is not waited for.
      if (stdout === undefined || stderr === undefined) return { exceeded: true }
      return { exitCode: await child.wait(), stdout, stderr }
    },
    async spawn(sandbox, argv, options) {
      const child = await sandbox.exec(argv, execOptions(options, "binary"))
      return {
        stdin: { write: (chunk) => child.stdin.writeBytes(chunk), close: () => child.stdin.close() },
        stdout: child.stdout,
        stderr: child.stderr,
        wait: () => child.wait(),
      }
    },
  }
}

/** A SandboxProvider named "modal": one disposable Modal Sandbox per lease. */
export function modalSandbox(options = {}) {
  const config = readOptions(options)
  const sdkAdapter = adapter(config)
  return Object.freeze({
    name: "modal",
    acquire(request) {
      return acquireRemote(sdkAdapter, request, config)
    },
  })
}
