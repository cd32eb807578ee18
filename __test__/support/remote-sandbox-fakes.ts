// Test doubles of the Daytona and Modal SDK surfaces the remote Sandboxes use. The "remote"
// is a host directory (`home`): commands run with `sh -c` there, so hydration and
// reconciliation really run tar. Every SDK call is recorded by name; `failures` makes a
// named call throw. Modal's absolute guest root `/workspace` is mapped to `<home>/workspace`.
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { gzipSync } from "node:zlib"

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

export async function fakeDaytona(): Promise<{ client: any; controls: FakeControls }> {
  const controls: FakeControls = { calls: [], failures: new Set(), home: await remoteHome("aml-fake-daytona-") }
  const map = (text: string) => text.replaceAll("/tmp/", `${controls.home}/tmp/`)
  const sessions = new Map<string, Map<string, ReturnType<typeof run>>>()
  const sandbox = {
    id: "sbx-1",
    fs: {
      async uploadFile(bytes: Buffer, path: string) {
        fail(controls, "fs.uploadFile")
        await writeFile(map(path), controls.upload ?? bytes)
      },
      async downloadFile(path: string) {
        fail(controls, "fs.downloadFile")
        return controls.download ?? (await readFile(map(path)))
      },
    },
    process: {
      async executeCommand(command: string, cwd?: string, env?: Record<string, string>, timeout?: number) {
        fail(controls, `process.executeCommand ${command}${timeout === undefined ? "" : ` timeout=${timeout}`}`)
        const result = await collect(map(command), cwd === undefined ? controls.home : join(controls.home, cwd), env)
        return { exitCode: result.exitCode, result: result.stdout + result.stderr }
      },
      async createSession(id: string) {
        fail(controls, "process.createSession")
        sessions.set(id, new Map())
      },
      async executeSessionCommand(id: string, request: { command: string; runAsync: boolean }) {
        fail(controls, `process.executeSessionCommand runAsync=${request.runAsync}`)
        const cmdId = `cmd-${sessions.get(id)!.size + 1}`
        sessions.get(id)!.set(cmdId, run(map(request.command), controls.home))
        return { cmdId }
      },
      async getSessionCommandLogs(id: string, cmdId: string, onStdout: (t: string) => void, onStderr: (t: string) => void) {
        controls.calls.push("process.getSessionCommandLogs")
        const { child, exit } = sessions.get(id)!.get(cmdId)!
        child.stdout!.on("data", (d) => onStdout(String(d)))
        child.stderr!.on("data", (d) => onStderr(String(d)))
        await exit
      },
      async getSessionCommand(id: string, cmdId: string) {
        controls.calls.push("process.getSessionCommand")
        const exitCode = await sessions.get(id)!.get(cmdId)!.exit
        return controls.noExitCode ? {} : { exitCode }
      },
      async sendSessionCommandInput(id: string, cmdId: string, data: string) {
        controls.calls.push("process.sendSessionCommandInput")
        sessions.get(id)!.get(cmdId)!.child.stdin!.write(data)
      },
      async deleteSession(id: string) {
        controls.calls.push("process.deleteSession")
        for (const { child } of sessions.get(id)!.values()) child.stdin!.end()
        sessions.delete(id)
      },
    },
    async delete() {
      killAll()
      fail(controls, "delete")
    },
  }
  const client = {
    async create(params: unknown, options: unknown) {
      controls.calls.push(`create ${JSON.stringify(params)} ${JSON.stringify(options)}`)
      await controls.createGate
      if (controls.failures.has("create")) throw new Error("create broke")
      return sandbox
    },
  }
  return { client, controls }
}

export async function fakeModal(): Promise<{ client: any; controls: FakeControls }> {
  const controls: FakeControls = { calls: [], failures: new Set(), home: await remoteHome("aml-fake-modal-") }
  const map = (text: string) =>
    // /tmp first: the mapped home itself lives under /tmp.
    text.replaceAll("/tmp/", `${controls.home}/tmp/`).replaceAll("/workspace", join(controls.home, "workspace"))
  const sandbox = {
    sandboxId: "sb-modal-1",
    async exec(argv: string[], params: { workdir?: string; env?: Record<string, string> }) {
      fail(controls, `exec ${argv[0]}`)
      const script = argv.map((arg) => quote(map(arg))).join(" ")
      const { child, exit } = run(script, params.workdir === undefined ? controls.home : map(params.workdir), params.env)
      return {
        stdin: { writeBytes: async (b: Uint8Array) => void child.stdin!.write(b), close: async () => void child.stdin!.end() },
        stdout: Readable.toWeb(child.stdout!),
        stderr: Readable.toWeb(child.stderr!),
        wait: () => exit,
      }
    },
    async open(path: string, mode: string) {
      fail(controls, `open ${mode}`)
      let written = Buffer.alloc(0)
      return {
        write: async (bytes: Uint8Array) => void (written = Buffer.concat([written, Buffer.from(bytes)])),
        read: async () => controls.download ?? (await readFile(map(path))),
        close: async () => {
          if (mode === "w") await writeFile(map(path), controls.upload ?? written)
        },
      }
    },
    async terminate() {
      killAll()
      fail(controls, "terminate")
    },
  }
  const client = {
    apps: { fromName: async (name: string, options: unknown) => (controls.calls.push(`apps.fromName ${name} ${JSON.stringify(options)}`), { name }) },
    images: { fromRegistry: (image: string) => (controls.calls.push(`images.fromRegistry ${image}`), { image }) },
    sandboxes: {
      async create(app: unknown, image: unknown, params: unknown) {
        controls.calls.push(`sandboxes.create ${JSON.stringify(params)}`)
        await controls.createGate
        return sandbox
      },
    },
  }
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
