// daytonaSandbox (INVENTORY BS-3): a disposable Daytona Sandbox per lease, the Workspace
// transferred into the relative guest directory `workspace` (lib/sandbox/remote/remote-sandbox.js). The
// SDK (`@daytona/sdk`, an optional peer) is imported on first use unless a `client` is
// given. The SDK surface used (docs/SANDBOX.md lists it; __test__/support/remote-sandbox-fakes.ts
// is type-checked against the published types):
//   client.create(params, { timeout, onSnapshotCreateLogs }) → sandbox (not abortable)
//   sandbox.fs.uploadFile(buffer, path), sandbox.fs.downloadFile(path) → Buffer
//   sandbox.process.executeCommand(command, cwd, env, timeoutSeconds) → { exitCode, result }
//   sandbox.process.createSession(id), executeSessionCommand(id, { command, runAsync: true,
//     suppressInputEcho: true }) → { cmdId }, getSessionCommandLogs(id, cmdId, onStdout,
//     onStderr), getSessionCommand(id, cmdId) → { exitCode }, sendSessionCommandInput(id,
//     cmdId, data), deleteSession(id)
//   sandbox.delete()
//
// Daytona records every command's text, so environment values never enter it: a command
// gets them through executeCommand's `env` parameter; a session command (whose request has
// no environment) sources them from a file uploaded beside it, removed before it starts.

import { randomUUID } from "node:crypto"
import { resolve } from "node:path"

import { DEFAULT_IMAGE, acquireRemote, optionString, shellQuote } from "./remote-sandbox.js"
import { checkOptionsRecord, maxOutputBytesOption } from "../options.js"
import { optionalPeer } from "../../core/optional-peer.js"

const LABEL = "Daytona Sandbox"

function readOptions(options) {
  checkOptionsRecord(LABEL, options)
  if (options.client !== undefined && options.config !== undefined) {
    throw new TypeError(`${LABEL} accepts either client or config, not both`)
  }
  if (options.create !== undefined && ("image" in options.create || "snapshot" in options.create)) {
    throw new TypeError(`${LABEL} image and snapshot are root options, not create options`)
  }
  if (options.image !== undefined && options.snapshot !== undefined) {
    throw new TypeError(`${LABEL} accepts either image or snapshot, not both`)
  }
  const maxOutputBytes = maxOutputBytesOption(LABEL, options.maxOutputBytes)
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
const loadSdk = optionalPeer(
  () => import("@daytona/sdk"),
  (cause) => new Error(`${LABEL} requires the optional peer dependency "@daytona/sdk" (npm install @daytona/sdk) or an application-supplied client`, { cause }),
)

async function loadClient(config) {
  const { Daytona } = await loadSdk()
  return new Daytona(config)
}

/** The command text Daytona runs and records: quoted words only, never a value of `env`. */
function command(argv) {
  return argv.map(shellQuote).join(" ")
}

/** `export NAME='value'` lines for a POSIX shell (names are validated by SandboxCommand). */
function exports(env) {
  return Object.entries(env).map(([key, value]) => `export ${key}=${shellQuote(value)}\n`).join("")
}

/** A copy of `env`, or undefined when it sets nothing. */
const nonEmpty = (env) => (env !== undefined && Object.keys(env).length > 0 ? { ...env } : undefined)

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
      const response = await sandbox.process.executeCommand(command(argv), options.cwd, nonEmpty(options.env), timeout)
      // Daytona returns one combined output: it is stdout, stderr stays empty.
      return { exitCode: response.exitCode, stdout: String(response.result ?? ""), stderr: "" }
    },
    async spawn(sandbox, argv, options) {
      const session = `aml-${randomUUID()}`
      const processApi = sandbox.process
      await processApi.createSession(session)
      const steps = []
      if (options.cwd !== undefined) steps.push(`cd ${shellQuote(options.cwd)}`)
      steps.push(command(argv))
      let cmdId
      try {
        const env = nonEmpty(options.env)
        if (env !== undefined) {
          const file = `/tmp/${session}.env`
          await sandbox.fs.uploadFile(Buffer.from(exports(env)), file)
          steps.splice(-1, 0, `. ${shellQuote(file)}`, `rm -f ${shellQuote(file)}`)
        }
        // Daytona echoes session input into the output by default; an ACP agent's stdout
        // carries JSON-RPC, so the echo is suppressed.
        const request = { command: steps.join(" && "), runAsync: true, suppressInputEcho: true }
        ;({ cmdId } = await processApi.executeSessionCommand(session, request))
      } catch (error) {
        await Promise.resolve(processApi.deleteSession(session)).catch(() => {})
        throw error
      }
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
