// Test doubles of the Daytona and Modal SDK surfaces the remote Sandboxes use, shaped
// exactly like the published SDK types (sdk-surfaces.ts; `npx tsc -p tsconfig.json` checks
// this file against them). The "remote" is a host directory (`home`): commands run with
// `sh -c` there, so hydration and reconciliation really run tar. Every SDK call is recorded
// by name; `failures` makes a named call throw. Modal's absolute guest root `/workspace` is
// mapped to `<home>/workspace`.
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join } from "node:path"
import { Readable } from "node:stream"
import { gzipSync } from "node:zlib"

import type { SandboxExecParams } from "modal"
import type { SessionCommandLogsResponse } from "@daytona/sdk"

import type {
  DaytonaClientSurface,
  DaytonaProcessSurface,
  DaytonaSandboxSurface,
  ModalClientSurface,
  ModalProcessSurface,
  ModalSandboxSurface,
} from "./sdk-surfaces.js"

export type Calls = string[]

/** Every process a fake started; `killAll` ends their groups (terminate/delete, test end). */
const live = new Set<ReturnType<typeof spawn>>()

const homes = new Set<string>()

export function killAll(): void {
  for (const child of live) {
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {}
  }
  live.clear()
}

/** Kills what the fakes started and removes their "remote" directories (afterEach). */
export async function cleanupFakes(): Promise<void> {
  killAll()
  for (const home of homes) await rm(home, { recursive: true, force: true })
  homes.clear()
}

/** A fake remote's home, with its own `tmp/` standing in for the remote `/tmp`. */
async function remoteHome(prefix: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), prefix))
  await mkdir(join(home, "tmp"))
  homes.add(home)
  return home
}

function run(script: string, cwd: string, env: Record<string, string> = {}) {
  // Its own process group, as a remote exec is, so the marker kill reaches the whole tree.
  const child = spawn("sh", ["-c", script], { cwd, detached: true, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
  live.add(child)
  // Input for a process that already ended is dropped, as a remote process API does.
  child.stdin.on("error", () => {})
  const exit = new Promise<number>((resolve) =>
    child.on("close", (code) => {
      live.delete(child)
      resolve(code ?? 137)
    }),
  )
  return { child, exit }
}

async function collect(script: string, cwd: string, env?: Record<string, string>) {
  const { child, exit } = run(script, cwd, env)
  child.stdin.end()
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  return { exitCode: await exit, stdout, stderr }
}

const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`

export interface FakeControls {
  calls: Calls
  failures: Set<string>
  home: string
  /** Every command text the provider would record (Daytona keeps each command's text). */
  commandTexts: string[]
  /** Every Modal exec's parameters, in order. */
  execParams: SandboxExecParams[]
  /** Every Modal exec's exit, as the remote sees it (before any wait() of the SDK's). */
  exits: Promise<number>[]
  /** Every Daytona session command request, in order. */
  sessionRequests: SessionExecuteRequest[]
  /** Resolves when create() should answer (default at once). */
  createGate?: Promise<void>
  /** Replaces the downloaded archive (e.g. a hostile one). */
  download?: Buffer
  /** getSessionCommand answers without an exit code. */
  noExitCode?: boolean
  /** Uploads store these bytes instead (a corrupt archive the remote tar rejects). */
  upload?: Buffer
}

function fail(controls: FakeControls, name: string) {
  controls.calls.push(name)
  if (controls.failures.has(name)) throw new Error(`${name} broke`)
}

async function newControls(prefix: string): Promise<FakeControls> {
  return { calls: [], commandTexts: [], execParams: [], exits: [], failures: new Set(), home: await remoteHome(prefix), sessionRequests: [] }
}

/** The real request type (the SDK does not export its name). */
type SessionExecuteRequest = Parameters<DaytonaProcessSurface["executeSessionCommand"]>[1]

interface SessionCommand {
  run: ReturnType<typeof run>
  /** Daytona echoes input into the output unless the request suppressed it. */
  echo: boolean
  onStdout?: (chunk: string) => void
}

export async function fakeDaytona(): Promise<{ client: DaytonaClientSurface; controls: FakeControls }> {
  const controls = await newControls("aml-fake-daytona-")
  const map = (text: string) => text.replaceAll("/tmp/", `${controls.home}/tmp/`)
  const sessions = new Map<string, Map<string, SessionCommand>>()
  const command = (id: string, cmdId: string) => {
    const found = sessions.get(id)?.get(cmdId)
    if (found === undefined) throw Object.assign(new Error("session command not found"), { statusCode: 404 })
    return found
  }

  // Both real overloads: bytes or a host path in; bytes back or written to a host path.
  async function uploadFile(file: Buffer | string, remotePath: string, _timeout?: number): Promise<void> {
    fail(controls, "fs.uploadFile")
    const bytes = typeof file === "string" ? await readFile(file) : file
    await writeFile(map(remotePath), controls.upload ?? bytes)
  }
  function downloadFile(remotePath: string, timeout?: number): Promise<Buffer>
  function downloadFile(remotePath: string, localPath: string, timeout?: number): Promise<void>
  async function downloadFile(remotePath: string, localPath?: string | number): Promise<Buffer | void> {
    fail(controls, "fs.downloadFile")
    const bytes = controls.download ?? (await readFile(map(remotePath)))
    if (typeof localPath !== "string") return bytes
    await mkdir(dirname(localPath), { recursive: true })
    await writeFile(localPath, bytes)
  }
  function getSessionCommandLogs(sessionId: string, commandId: string): Promise<SessionCommandLogsResponse>
  function getSessionCommandLogs(sessionId: string, commandId: string, onStdout: (chunk: string) => void, onStderr: (chunk: string) => void): Promise<void>
  async function getSessionCommandLogs(
    id: string,
    cmdId: string,
    onStdout?: (chunk: string) => void,
    onStderr?: (chunk: string) => void,
  ): Promise<SessionCommandLogsResponse | void> {
    controls.calls.push("process.getSessionCommandLogs")
    const found = command(id, cmdId)
    let stdout = ""
    let stderr = ""
    const out = onStdout ?? ((chunk: string) => void (stdout += chunk))
    found.onStdout = out
    found.run.child.stdout!.on("data", (d) => out(String(d)))
    found.run.child.stderr!.on("data", (d) => (onStderr ?? ((chunk: string) => void (stderr += chunk)))(String(d)))
    await found.run.exit
    if (onStdout === undefined) return { output: stdout + stderr, stderr, stdout }
  }

  const processApi = {
    async executeCommand(commandText: string, cwd?: string, env?: Record<string, string>, timeout?: number) {
      fail(controls, `process.executeCommand ${commandText}${timeout === undefined ? "" : ` timeout=${timeout}`}`)
      controls.commandTexts.push(commandText)
      const result = await collect(map(commandText), cwd === undefined ? controls.home : join(controls.home, cwd), env)
      return { exitCode: result.exitCode, result: result.stdout + result.stderr }
    },
    async createSession(id: string) {
      fail(controls, "process.createSession")
      sessions.set(id, new Map())
    },
    async executeSessionCommand(id: string, request: SessionExecuteRequest) {
      fail(controls, `process.executeSessionCommand runAsync=${request.runAsync}`)
      controls.commandTexts.push(request.command)
      controls.sessionRequests.push({ ...request })
      const commands = sessions.get(id)!
      const cmdId = `cmd-${commands.size + 1}`
      commands.set(cmdId, { echo: request.suppressInputEcho !== true, run: run(map(request.command), controls.home) })
      return { cmdId }
    },
    getSessionCommandLogs,
    async getSessionCommand(id: string, cmdId: string) {
      controls.calls.push("process.getSessionCommand")
      const exitCode = await command(id, cmdId).run.exit
      return controls.noExitCode ? { command: "", id: cmdId } : { command: "", exitCode, id: cmdId }
    },
    async sendSessionCommandInput(id: string, cmdId: string, data: string) {
      controls.calls.push("process.sendSessionCommandInput")
      const found = command(id, cmdId)
      if (found.echo) found.onStdout?.(data)
      found.run.child.stdin!.write(data)
    },
    async deleteSession(id: string) {
      controls.calls.push("process.deleteSession")
      for (const { run: { child } } of sessions.get(id)?.values() ?? []) child.stdin!.end()
      sessions.delete(id)
    },
  } satisfies DaytonaProcessSurface
  const sandbox = {
    id: "sbx-1",
    fs: { uploadFile, downloadFile },
    process: processApi,
    async delete(_timeout?: number, _wait?: boolean) {
      killAll()
      fail(controls, "delete")
    },
  } satisfies DaytonaSandboxSurface
  const client = {
    async create(params?: unknown, options?: unknown) {
      controls.calls.push(`create ${JSON.stringify(params)} ${JSON.stringify(options)}`)
      await controls.createGate
      if (controls.failures.has("create")) throw new Error("create broke")
      return sandbox
    },
  } satisfies DaytonaClientSurface
  return { client, controls }
}

/** A WritableStream with Modal's writeText/writeBytes, as `ModalWriteStream` declares. */
function modalWriteStream<R>(sink: UnderlyingSink<R>) {
  const stream = new WritableStream<R>(sink)
  const write = async (chunk: R) => {
    const writer = stream.getWriter()
    try {
      await writer.write(chunk)
    } finally {
      writer.releaseLock()
    }
  }
  return Object.assign(stream, {
    writeText: (text: string) => write(text as R),
    writeBytes: (bytes: Uint8Array) => write(bytes as R),
  })
}

/** A ReadableStream with Modal's readText/readBytes, as `ModalReadStream` declares. */
function modalReadStream<R extends string | Uint8Array>(stream: ReadableStream<R>) {
  const readBytes = async () => {
    const chunks: Uint8Array[] = []
    for await (const chunk of stream) chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk)
    return new Uint8Array(Buffer.concat(chunks))
  }
  return Object.assign(stream, { readBytes, readText: async () => new TextDecoder().decode(await readBytes()) })
}

export async function fakeModal(): Promise<{ client: ModalClientSurface; controls: FakeControls }> {
  const controls = await newControls("aml-fake-modal-")
  const map = (text: string) =>
    // /tmp first: the mapped home itself lives under /tmp.
    text.replaceAll("/tmp/", `${controls.home}/tmp/`).replaceAll("/workspace", join(controls.home, "workspace"))
  const absolute = (path: string) => {
    if (!isAbsolute(path)) throw new Error(`${path} must be an absolute path in the Sandbox`)
    return map(path)
  }
  const sandbox = {
    sandboxId: "sb-modal-1",
    async exec(argv: string[], params: SandboxExecParams = {}): Promise<ModalProcessSurface> {
      fail(controls, `exec ${argv[0]}`)
      controls.execParams.push({ ...params })
      const script = argv.map((arg) => quote(map(arg))).join(" ")
      const { child, exit } = run(script, params.workdir === undefined ? controls.home : map(params.workdir), params.env)
      controls.exits.push(exit)
      // As the SDK does: raw bytes in binary mode, UTF-8 text otherwise.
      const output = (source: Readable) => {
        const bytes = Readable.toWeb(source) as ReadableStream<Uint8Array>
        return params.mode === "binary" ? modalReadStream(bytes) : modalReadStream(bytes.pipeThrough<string>(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>))
      }
      return {
        stdin: modalWriteStream<string | Uint8Array>({
          write: (chunk) => void child.stdin!.write(chunk),
          close: () => void child.stdin!.end(),
        }),
        stdout: output(child.stdout!),
        stderr: output(child.stderr!),
        wait: () => exit,
      }
    },
    filesystem: {
      async copyFromLocal(localPath: string, remotePath: string) {
        fail(controls, "filesystem.copyFromLocal")
        const target = absolute(remotePath)
        await mkdir(dirname(target), { recursive: true })
        await writeFile(target, controls.upload ?? (await readFile(localPath)))
      },
      async copyToLocal(remotePath: string, localPath: string) {
        fail(controls, "filesystem.copyToLocal")
        const bytes = controls.download ?? (await readFile(absolute(remotePath)))
        await mkdir(dirname(localPath), { recursive: true })
        await writeFile(localPath, bytes)
      },
    },
    async terminate() {
      killAll()
      fail(controls, "terminate")
    },
  } satisfies ModalSandboxSurface
  const client = {
    apps: {
      fromName: async (name: string, options?: { createIfMissing?: boolean; environment?: string }) => (
        controls.calls.push(`apps.fromName ${name} ${JSON.stringify(options)}`), { appId: `ap-${name}`, name }
      ),
    },
    images: { fromRegistry: (image: string) => (controls.calls.push(`images.fromRegistry ${image}`), { imageId: `im-${image}` }) },
    sandboxes: {
      async create(_app: unknown, _image: unknown, params?: unknown) {
        controls.calls.push(`sandboxes.create ${JSON.stringify(params)}`)
        await controls.createGate
        return sandbox
      },
    },
  } satisfies ModalClientSurface
  return { client, controls }
}

/** A gzip tar holding one regular file named `name` (any bytes, `..` included). */
export function hostileArchive(name: string, content = "evil"): Buffer {
  const header = Buffer.alloc(512)
  header.write(name, 0, "utf8")
  header.write("0000644\0", 100)
  header.write("0000000\0", 108)
  header.write("0000000\0", 116)
  header.write(content.length.toString(8).padStart(11, "0") + "\0", 124)
  header.write("00000000000\0", 136)
  header.write("        ", 148)
  header.write("0", 156)
  header.write("ustar\0", 257)
  header.write("00", 263)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(sum.toString(8).padStart(6, "0") + "\0 ", 148)
  const body = Buffer.alloc(512)
  body.write(content)
  return gzipSync(Buffer.concat([header, body, Buffer.alloc(1024)]))
}
