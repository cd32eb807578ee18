// daytonaSandbox (INVENTORY BS-3): a disposable Daytona Sandbox per lease, the Workspace
// transferred into the relative guest directory `workspace` (lib/remote-sandbox.js). The
// SDK (`@daytona/sdk`, an optional peer) is imported on first use unless a `client` is
// given. The SDK surface used (docs/DOCKER-SANDBOX.md lists it):
//   client.create(params, { timeout, onSnapshotCreateLogs }) → sandbox (not abortable)
//   sandbox.fs.uploadFile(buffer, path), sandbox.fs.downloadFile(path) → Buffer
//   sandbox.process.executeCommand(command, cwd, env, timeoutSeconds) → { exitCode, result }
//   sandbox.process.createSession(id), executeSessionCommand(id, { command, runAsync: true })
//     → { cmdId }, getSessionCommandLogs(id, cmdId, onStdout, onStderr),
//     getSessionCommand(id, cmdId) → { exitCode }, sendSessionCommandInput(id, cmdId, data),
//     deleteSession(id)
//   sandbox.delete()

import { randomUUID } from "node:crypto"
import { resolve } from "node:path"

import {
  DEFAULT_IMAGE,
  DEFAULT_MAX_OUTPUT_BYTES,
  acquireRemote,
  isObject,
  optionString,
  shellQuote,
} from "./remote-sandbox.js"

const LABEL = "Daytona Sandbox"

function readOptions(options) {
  if (!isObject(options)) throw new TypeError(`${LABEL} options must be an object`)
  if (options.client !== undefined && options.config !== undefined) {
    throw new TypeError(`${LABEL} accepts either client or config, not both`)
  }
  if (options.create !== undefined && ("image" in options.create || "snapshot" in options.create)) {
    throw new TypeError(`${LABEL} image and snapshot are root options, not create options`)
  }
  if (options.image !== undefined && options.snapshot !== undefined) {
    throw new TypeError(`${LABEL} accepts either image or snapshot, not both`)
  }
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes <= 0) {
    throw new RangeError(`${LABEL} maxOutputBytes must be a positive safe integer`)
  }
  const workspace = optionString(LABEL, options.workspace, "workspace")
  return {
    client: options.client,
    config: options.config,
    create: options.create ?? {},
    createOptions: options.createOptions ?? {},
    identity: options.snapshot !== undefined ? { snapshot: options.snapshot } : { image: options.image ?? DEFAULT_IMAGE },
    maxOutputBytes,
    setup: optionString(LABEL, options.setup, "setup"),
    workspace: workspace === undefined ? undefined : resolve(workspace),
  }
}

/** The SDK, imported once on first use; a clear error names the missing package. */
let sdk
async function loadClient(config) {
  sdk ??= import("@daytona/sdk").catch((error) => {
    sdk = undefined
    throw new Error(`${LABEL} requires the optional peer dependency "@daytona/sdk" (npm install @daytona/sdk) or an application-supplied client`, { cause: error })
  })
  const { Daytona } = await sdk
  return new Daytona(config)
}

function command(argv, env) {
  const assignments = Object.entries(env ?? {}).map(([key, value]) => `${key}=${shellQuote(value)}`)
  const words = argv.map(shellQuote)
  return assignments.length === 0 ? words.join(" ") : `env ${assignments.join(" ")} ${words.join(" ")}`
}

/** A ReadableStream fed by the session log callbacks. */
function logStream() {
  let controller
  const stream = new ReadableStream({ start: (c) => (controller = c) })
  return { stream, push: (text) => controller.enqueue(new TextEncoder().encode(text)), end: () => controller.close(), fail: (e) => controller.error(e) }
}

function adapter(config) {
  let client
  const getClient = async () => (client ??= config.client ?? (await loadClient(config.config)))
  return {
    label: LABEL,
    kind: "daytona",
    guestRoot: "workspace",
    leaseId: (sandbox) => `daytona:${sandbox.id}`,
    setupDetail: (result) => result.stdout.trim(),
    async create() {
      const daytona = await getClient()
      return daytona.create({ ...config.create, ...config.identity }, { ...config.createOptions })
    },
    destroy: (sandbox) => sandbox.delete(),
    upload: (sandbox, path, bytes) => sandbox.fs.uploadFile(bytes, path),
    download: (sandbox, path) => sandbox.fs.downloadFile(path),
    async run(sandbox, argv, options) {
      const timeout = options.timeoutMs === undefined ? undefined : Math.ceil(options.timeoutMs / 1000)
      const response = await sandbox.process.executeCommand(command(argv, options.env), options.cwd, undefined, timeout)
      // Daytona returns one combined output: it is stdout, stderr stays empty.
      return { exitCode: response.exitCode, stdout: String(response.result ?? ""), stderr: "" }
    },
    async spawn(sandbox, argv, options) {
      const session = `aml-${randomUUID()}`
      const processApi = sandbox.process
      await processApi.createSession(session)
      const line = options.cwd === undefined ? command(argv, options.env) : `cd ${shellQuote(options.cwd)} && ${command(argv, options.env)}`
      const { cmdId } = await processApi.executeSessionCommand(session, { command: line, runAsync: true })
      const stdout = logStream()
      const stderr = logStream()
      const logs = Promise.resolve(processApi.getSessionCommandLogs(session, cmdId, stdout.push, stderr.push)).then(
        () => (stdout.end(), stderr.end()),
        (error) => (stdout.fail(error), stderr.fail(error)),
      )
      return {
        stdin: {
          write: (chunk) => processApi.sendSessionCommandInput(session, cmdId, Buffer.from(chunk).toString("utf8")),
          // Daytona has no end-of-input for a session command: closing only stops writes.
          close: async () => {},
        },
        stdout: stdout.stream,
        stderr: stderr.stream,
        async wait() {
          await logs.catch(() => {})
          try {
            return (await processApi.getSessionCommand(session, cmdId)).exitCode
          } finally {
            await Promise.resolve(processApi.deleteSession(session)).catch(() => {})
          }
        },
      }
    },
  }
}

/** A SandboxProvider named "daytona": one disposable Daytona Sandbox per lease. */
export function daytonaSandbox(options = {}) {
  const config = readOptions(options)
  const sdkAdapter = adapter(config)
  return Object.freeze({
    name: "daytona",
    acquire(request) {
      return acquireRemote(sdkAdapter, request, config)
    },
  })
}
