// daytonaSandbox (INVENTORY BS-3) against an injected client shaped like the real
// `@daytona/sdk` (support/remote-sandbox-fakes.ts, type-checked against the package's
// published types: recorded calls, a host directory as the remote, scripted failures, input
// echoed into the output unless suppressed, as Daytona does). Hydration and reconciliation really run: Rust packs and mirrors,
// the fake's shell runs tar. A live test runs only with DAYTONA_API_KEY.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile, readdir } from "node:fs/promises"
import { randomBytes } from "node:crypto"
import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterEach, beforeEach, describe, expect, test, vi } from "vitest"

import { daytonaSandbox } from "@aml-jsx/sdk"
import type { SandboxAcquireRequest } from "@aml-jsx/sdk"
import { sandboxProviderConformance } from "@aml-jsx/sdk/testing"

import { expectExact, rejection } from "./support/errors.js"
import { fakeDaytona, cleanupFakes, hostileArchive } from "./support/remote-sandbox-fakes.js"

afterEach(cleanupFakes)

let local: string

beforeEach(async () => {
  local = realpathSync(await mkdtemp(join(tmpdir(), "aml-daytona-local-")))
  await mkdir(join(local, "src/deep/er"), { recursive: true })
  await writeFile(join(local, "src/deep/er/a.txt"), "A")
  await writeFile(join(local, "keep.txt"), "keep")
  await writeFile(join(local, "delete-me.txt"), "old")
  return () => rm(local, { recursive: true, force: true })
})

const request = (overrides: Partial<SandboxAcquireRequest> = {}): SandboxAcquireRequest =>
  Object.freeze({ access: "read-write", cwd: ".", evaluationId: "e", root: ".", signal: new AbortController().signal, ...overrides })

function syncThrow(body: () => unknown): any {
  try {
    body()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

describe("options", () => {
  test("a frozen provider named daytona; every option error", () => {
    const provider = daytonaSandbox({ client: {} })
    expect(provider.name).toBe("daytona")
    expect(Object.isFrozen(provider)).toBe(true)
    expectExact(syncThrow(() => daytonaSandbox(null as any)), TypeError, "Daytona Sandbox options must be an object")
    expectExact(syncThrow(() => daytonaSandbox({ client: {}, config: {} } as any)), TypeError, "Daytona Sandbox accepts either client or config, not both")
    for (const create of [{ image: "x" }, { snapshot: "y" }]) {
      expectExact(syncThrow(() => daytonaSandbox({ create } as any)), TypeError, "Daytona Sandbox image and snapshot are root options, not create options")
    }
    expectExact(syncThrow(() => daytonaSandbox({ image: "i", snapshot: "s" } as any)), TypeError, "Daytona Sandbox accepts either image or snapshot, not both")
    for (const maxOutputBytes of [0, -1, 1.5, "1"]) {
      expectExact(syncThrow(() => daytonaSandbox({ maxOutputBytes } as any)), RangeError, "Daytona Sandbox maxOutputBytes must be a positive safe integer")
    }
    for (const name of ["setup", "workspace"]) {
      for (const value of ["", "  ", 3]) {
        expectExact(syncThrow(() => daytonaSandbox({ [name]: value } as any)), TypeError, `Daytona Sandbox ${name} must be a non-empty string`)
      }
    }
  })

  test("without a client the optional peer @daytona/sdk is loaded lazily; missing, the error names it", async () => {
    vi.resetModules()
    vi.doMock("@daytona/sdk", () => {
      throw new Error("Cannot find package '@daytona/sdk'")
    })
    try {
      const { daytonaSandbox: isolated } = await import("../lib/sandbox/remote/daytona.js")
      const error = await rejection(isolated({ workspace: local }).acquire(request()))
      expectExact(error, Error, 'Daytona Sandbox requires the optional peer dependency "@daytona/sdk" (npm install @daytona/sdk) or an application-supplied client')
      expect(error.cause).toBeInstanceOf(Error)
    } finally {
      vi.doUnmock("@daytona/sdk")
      vi.resetModules()
    }
  })

  test("installed, the real SDK's Daytona client is built from config on first acquisition", async () => {
    // No API key anywhere: the real client refuses to construct, before any request.
    const saved = { key: process.env.DAYTONA_API_KEY, jwt: process.env.DAYTONA_JWT_TOKEN }
    delete process.env.DAYTONA_API_KEY
    delete process.env.DAYTONA_JWT_TOKEN
    try {
      const { DaytonaAuthenticationError } = await import("@daytona/sdk")
      const error = await rejection(daytonaSandbox({ workspace: local, config: { apiUrl: "http://127.0.0.1:9" } }).acquire(request()))
      expect(error).toBeInstanceOf(DaytonaAuthenticationError)
    } finally {
      if (saved.key !== undefined) process.env.DAYTONA_API_KEY = saved.key
      if (saved.jwt !== undefined) process.env.DAYTONA_JWT_TOKEN = saved.jwt
    }
  })
})

describe("lifecycle", () => {
  test("create → upload → extract → setup → exec → archive → download → mirror → delete, in that order", async () => {
    const { client, controls } = await fakeDaytona()
    const logs = () => {}
    const provider = daytonaSandbox({ client, workspace: local, setup: "printf ready > setup.txt", create: { labels: { a: "b" } }, createOptions: { timeout: 30, onSnapshotCreateLogs: logs } })
    const lease = await provider.acquire(request())
    expect(lease.id).toBe("daytona:sbx-1")
    expect(lease.handle.kind).toBe("daytona")
    expect(await readFile(join(controls.home, "workspace/src/deep/er/a.txt"), "utf8")).toBe("A")
    const result = await lease.runtime.exec("sh", ["-c", "pwd; echo to-stderr >&2; exit 4"], { cwd: "src/deep" })
    expect(result).toEqual({ exitCode: 4, stderr: "", stdout: `${join(controls.home, "workspace/src/deep")}\nto-stderr\n` })
    const quoted = await lease.runtime.exec("sh", ["-c", 'printf "%s|" "$1" "$2" "$A_B"', "sh", "it's", "$HOME"], { env: { A_B: "x y" } })
    expect(quoted.stdout).toBe("it's|$HOME|x y|")
    // The value went through executeCommand's env parameter, not into the recorded text.
    expect(controls.commandTexts.filter((text) => text.includes("x y"))).toEqual([])
    // Remote edits: a change, an addition in a new nested directory, a deletion.
    await lease.runtime.exec("sh", ["-c", "printf changed > keep.txt; mkdir -p new/dir && printf n > new/dir/n.txt; rm delete-me.txt"])
    await lease.release()
    await lease.release()
    expect(await readFile(join(local, "keep.txt"), "utf8")).toBe("changed")
    expect(await readFile(join(local, "new/dir/n.txt"), "utf8")).toBe("n")
    expect(await readFile(join(local, "setup.txt"), "utf8")).toBe("ready")
    expect((await readdir(local)).sort()).toEqual(["keep.txt", "new", "setup.txt", "src"])
    const names = controls.calls.map((call) => call.split(" ")[0])
    expect(controls.calls[0]).toBe(`create {"labels":{"a":"b"},"image":"wearesingular/aml-agent-sandbox:latest"} {"timeout":30}`)
    expect(names).toEqual([
      "create",
      "fs.uploadFile",
      "process.executeCommand",
      "process.executeCommand",
      "process.executeCommand",
      "process.executeCommand",
      "process.executeCommand",
      "process.executeCommand",
      "fs.downloadFile",
      "delete",
    ])
    expect(controls.calls[2]).toMatch(/^process\.executeCommand 'sh' '-c' 'rm -rf '\\''workspace'\\'' && mkdir -p/)
    expect(controls.calls[3]).toBe("process.executeCommand 'sh' '-lc' 'printf ready > setup.txt'")
  })

  test("snapshot selects snapshot-based creation", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local, snapshot: "snap-1" }).acquire(request({ access: "read-only" }))
    await lease.release()
    expect(controls.calls[0]).toBe(`create {"snapshot":"snap-1"} {}`)
  })

  test("read-only: exec and spawn are refused, release skips reconciliation", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local }).acquire(request({ access: "read-only" }))
    const message = "Daytona Sandbox cannot execute under read-only access because its transferred Workspace is not mounted read-only"
    expectExact(await rejection(lease.runtime.exec("true")), Error, message)
    expectExact(await rejection(lease.runtime.spawn("true")), Error, message)
    await lease.release()
    expect(controls.calls.at(-1)).toBe("delete")
    expect(controls.calls.some((call) => call.startsWith("fs.downloadFile"))).toBe(false)
  })

  test("sandboxProviderConformance", async () => {
    const { client } = await fakeDaytona()
    await sandboxProviderConformance(daytonaSandbox({ client, workspace: local }))
  })

  test("Workspace boundary errors", async () => {
    const { client } = await fakeDaytona()
    expectExact(await rejection(daytonaSandbox({ client }).acquire(request())), TypeError, "Daytona Sandbox requires an active Workspace or configured workspace")
    expectExact(await rejection(daytonaSandbox({ client, workspace: local }).acquire(request({ root: "missing" }))), Error, "Daytona Sandbox root must be a directory")
    const outside = await mkdtemp(join(tmpdir(), "aml-daytona-outside-"))
    try {
      await symlink(outside, join(local, "escape"))
      expectExact(await rejection(daytonaSandbox({ client, workspace: local }).acquire(request({ root: "escape" }))), Error, "Daytona Sandbox root resolves outside its configured boundary")
      expectExact(await rejection(daytonaSandbox({ client, workspace: local }).acquire(request({ cwd: "escape" }))), Error, "Daytona Sandbox cwd resolves outside its configured boundary")
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })
})

describe("failures", () => {
  test("setup failure reports stdout and deletes the Sandbox; a failed delete aggregates", async () => {
    const { client, controls } = await fakeDaytona()
    const error = await rejection(daytonaSandbox({ client, workspace: local, setup: "echo no-good; exit 3" }).acquire(request()))
    expectExact(error, Error, "Daytona Sandbox setup failed with exit code 3: no-good")
    expect(controls.calls.at(-1)).toBe("delete")
    controls.failures.add("delete")
    const both = await rejection(daytonaSandbox({ client, workspace: local, setup: "exit 2" }).acquire(request()))
    expectExact(both, AggregateError, "Daytona Sandbox acquisition and cleanup failed")
    expect(both.errors.map((e: Error) => e.message)).toEqual(["Daytona Sandbox setup failed with exit code 2: ", "delete broke"])
  })

  test("hydration failure deletes the Sandbox", async () => {
    const { client, controls } = await fakeDaytona()
    controls.failures.add("fs.uploadFile")
    const error = await rejection(daytonaSandbox({ client, workspace: local }).acquire(request()))
    expectExact(error, Error, "Daytona Sandbox Workspace hydration failed: fs.uploadFile broke")
    expect(controls.calls.at(-1)).toBe("delete")
  })

  test("maxOutputBytes bounds command output, not the transfer: a Workspace over 4 MiB hydrates and reconciles", async () => {
    const big = randomBytes(5 * 1024 * 1024)
    await writeFile(join(local, "big.bin"), big)
    for (const maxOutputBytes of [undefined, 1000]) {
      const { client, controls } = await fakeDaytona()
      const options = maxOutputBytes === undefined ? { client, workspace: local } : { client, workspace: local, maxOutputBytes }
      const lease = await daytonaSandbox(options).acquire(request())
      expect((await readFile(join(controls.home, "workspace/big.bin"))).equals(big)).toBe(true)
      await lease.runtime.exec("sh", ["-c", "head -c 6000000 /dev/zero > zeros.bin; rm big.bin"])
      await lease.release()
      expect((await readFile(join(local, "zeros.bin"))).length).toBe(6_000_000)
      await expect(readFile(join(local, "big.bin"))).rejects.toMatchObject({ code: "ENOENT" })
      await writeFile(join(local, "big.bin"), big)
      await rm(join(local, "zeros.bin"))
    }
  })

  test("creation is not abortable: an abort rejects at once and the late Sandbox is deleted", async () => {
    const { client, controls } = await fakeDaytona()
    let open!: () => void
    controls.createGate = new Promise((resolve) => (open = resolve))
    const controller = new AbortController()
    const acquiring = daytonaSandbox({ client, workspace: local }).acquire(request({ signal: controller.signal }))
    // The abort must arrive while creation is pending: wait for the create call itself.
    while (!controls.calls.some((call) => call.startsWith("create"))) await new Promise((resolve) => setTimeout(resolve, 5))
    const reason = new Error("stop creating")
    controller.abort(reason)
    expect(await rejection(acquiring)).toBe(reason)
    expect(controls.calls.includes("delete")).toBe(false)
    open()
    for (let i = 0; i < 100 && !controls.calls.includes("delete"); i++) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(controls.calls.map((c) => c.split(" ")[0])).toEqual(["create", "delete"])
  })

  test("an abort before creation starts rejects with its reason and creates nothing", async () => {
    const { client, controls } = await fakeDaytona()
    const controller = new AbortController()
    const acquiring = daytonaSandbox({ client, workspace: local }).acquire(request({ signal: controller.signal }))
    // acquire() ran synchronously up to its first await (the Workspace checks): the abort
    // lands there, before create. It used to add its listener to the aborted signal and hang.
    const reason = new Error("stop before creating")
    controller.abort(reason)
    expect(await rejection(acquiring)).toBe(reason)
    expect(controls.calls).toEqual([])
  })

  test("a reconciliation archive with a traversal entry is refused: nothing written, the Sandbox deleted", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local }).acquire(request())
    controls.download = hostileArchive("../evil.txt")
    const error = await rejection(lease.release())
    expectExact(error, Error, 'Daytona Sandbox Workspace reconciliation failed: Workspace archive contains unsafe path "../evil.txt"')
    expect(controls.calls.at(-1)).toBe("delete")
    expect(await readFile(join(local, "delete-me.txt"), "utf8")).toBe("old")
    await expect(readFile(join(local, "../evil.txt"))).rejects.toThrow()
    controls.download = undefined
    const lease2 = await daytonaSandbox({ client, workspace: local }).acquire(request())
    // The guest's Workspace disappears, so the reconciliation tar fails. (A `chmod 000` here
    // changed nothing for root and, without root, left a directory no later test could enter.)
    await lease2.runtime.exec("sh", ["-c", "rm -rf ../workspace"])
    const tarFailed = await rejection(lease2.release())
    expect(tarFailed.constructor).toBe(Error)
    expect(tarFailed.message).toMatch(/^Daytona Sandbox Workspace reconciliation failed with exit code [1-9]\d*: /)
    controls.download = hostileArchive("../evil.txt")
    controls.failures.add("delete")
    const again = await daytonaSandbox({ client, workspace: local }).acquire(request())
    const both = await rejection(again.release())
    expectExact(both, AggregateError, "Daytona Sandbox reconciliation and cleanup failed")
  })

  test("command output is bounded; an aborted command deletes the Sandbox and rejects with the reason", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local, maxOutputBytes: 2000 }).acquire(request())
    expectExact(await rejection(lease.runtime.exec("sh", ["-c", "yes | head -c 3000"])), RangeError, "Daytona Sandbox command output exceeded 2000 bytes")
    const timed = await lease.runtime.exec("true", [], { timeoutMs: 1500 })
    expect(timed.exitCode).toBe(0)
    expect(controls.calls.at(-1)).toBe("process.executeCommand 'true' timeout=2")
    const controller = new AbortController()
    const running = lease.runtime.exec("sleep", ["5"], { signal: controller.signal })
    const reason = new Error("abort the command")
    setTimeout(() => controller.abort(reason), 20)
    expect(await rejection(running)).toBe(reason)
    expect(controls.calls.at(-1)).toBe("delete")
    await lease.release()
    expect(controls.calls.filter((call) => call === "delete")).toHaveLength(1)
    // The Sandbox could not be deleted after the abort either: both are kept.
    const second = await daytonaSandbox({ client, workspace: local }).acquire(request())
    controls.failures.add("delete")
    const stop = new AbortController()
    const slow = second.runtime.exec("sleep", ["5"], { signal: stop.signal })
    setTimeout(() => stop.abort(reason), 20)
    const both = await rejection(slow)
    expectExact(both, AggregateError, "Daytona Sandbox command and cleanup failed")
    expect(both.errors).toEqual([reason, new Error("delete broke")])
  })
})

describe("spawn", () => {
  test("a session command streams input to output; input closed after close(); exit code; kill", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local }).acquire(request())
    const child = await lease.runtime.spawn("sh", ["-c", "read line; echo \"got $line\"; exit 6"])
    expect(child.id).toMatch(/^daytona-process:/)
    const writer = child.stdin.getWriter()
    await writer.write(new TextEncoder().encode("hello\n"))
    const reader = child.stdout.getReader()
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("got hello\n")
    await writer.close()
    expect(await child.wait()).toEqual({ exitCode: 6 })
    expect(controls.calls).toContain("process.executeSessionCommand runAsync=true")
    expect(controls.sessionRequests[0]).toMatchObject({ runAsync: true, suppressInputEcho: true })
    expect(controls.calls).toContain("process.sendSessionCommandInput")
    expect(controls.calls).toContain("process.deleteSession")
    const done = await lease.runtime.spawn("true")
    expect(await done.wait()).toEqual({ exitCode: 0 })
    const late = await rejection(done.stdin.getWriter().write(new Uint8Array([1])))
    expectExact(late, Error, "Daytona Sandbox process input is closed")
    const endless = await lease.runtime.spawn("sleep", ["30"])
    await endless.kill()
    await endless.kill()
    expect((await endless.wait()).exitCode).not.toBe(0)
    await lease.release()
  })

  test("a session command's environment reaches the process but never the command text Daytona records", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local }).acquire(request())
    const env = { SECRET: "it's a s3cr3t $HOME", OTHER: "two" }
    const child = await lease.runtime.spawn("sh", ["-c", 'printf "%s|%s|%s" "$SECRET" "$OTHER" "$(pwd)"'], { cwd: "src", env })
    const chunks: Uint8Array[] = []
    for await (const chunk of child.stdout as any) chunks.push(chunk)
    expect(await child.wait()).toEqual({ exitCode: 0 })
    expect(Buffer.concat(chunks).toString()).toBe(`it's a s3cr3t $HOME|two|${join(controls.home, "workspace/src")}`)
    expect(controls.commandTexts.filter((text) => text.includes("s3cr3t") || text.includes("two"))).toEqual([])
    // The uploaded environment file is gone before the command runs.
    expect(await readdir(join(controls.home, "tmp"))).not.toContainEqual(expect.stringMatching(/\.env$/))
    await lease.release()
  })

  test("an ACP-style JSON-RPC exchange over stdin/stdout sees only the process's own output", async () => {
    const { client } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local }).acquire(request())
    const child = await lease.runtime.spawn("sh", ["-c", 'read line; printf \'{"jsonrpc":"2.0","id":1,"result":{}}\\n\''])
    const writer = child.stdin.getWriter()
    await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'))
    const chunks: Uint8Array[] = []
    for await (const chunk of child.stdout as any) chunks.push(chunk)
    expect(Buffer.concat(chunks).toString()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n')
    expect(await child.wait()).toEqual({ exitCode: 0 })
    await lease.release()
  })

  test("process output is bounded and a missing exit code is an error", async () => {
    const { client, controls } = await fakeDaytona()
    const lease = await daytonaSandbox({ client, workspace: local, maxOutputBytes: 2000 }).acquire(request({ access: "read-write" }))
    const noisy = await lease.runtime.spawn("sh", ["-c", "yes | head -c 3000"])
    const error = await rejection((async () => { for await (const _ of noisy.stdout as any) {} })())
    expectExact(error, RangeError, "Daytona Sandbox process output exceeded 2000 bytes")
    await noisy.wait().catch(() => {})
    controls.noExitCode = true
    const silent = await lease.runtime.spawn("true")
    expectExact(await rejection(silent.wait()), Error, "Daytona Sandbox process completed without an exit code")
    controls.noExitCode = false
    await lease.release().catch(() => {})
  })
})

test.skipIf(!process.env.DAYTONA_API_KEY)("live Daytona (needs DAYTONA_API_KEY and @daytona/sdk; skipped without them)", async () => {
  const lease = await daytonaSandbox({ config: { apiKey: process.env.DAYTONA_API_KEY }, workspace: local }).acquire(request())
  try {
    expect((await lease.runtime.exec("sh", ["-c", "cat keep.txt"])).stdout).toBe("keep")
  } finally {
    await lease.release()
  }
})
