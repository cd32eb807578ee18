// modalSandbox (INVENTORY BS-4) against an injected client shaped like the real `modal`
// SDK (support/remote-sandbox-fakes.ts, type-checked against the package's published
// types). The lifecycle is shared with Daytona (lib/sandbox/remote/remote-sandbox.js, proven in
// daytona-sandbox.spec.ts); this file proves Modal's own options, SDK calls, guest root,
// streams, messages and the lazy optional peer.
import { mkdir, mkdtemp, readFile, rm, writeFile, readdir } from "node:fs/promises"
import { randomBytes } from "node:crypto"
import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterEach, beforeEach, describe, expect, test, vi } from "vitest"

import { modalSandbox } from "@aml-jsx/sdk"
import type { SandboxAcquireRequest } from "@aml-jsx/sdk"
import { sandboxProviderConformance } from "@aml-jsx/sdk/testing"

import { expectExact, rejection } from "./support/errors.js"
import { fakeModal, cleanupFakes, hostileArchive } from "./support/remote-sandbox-fakes.js"

afterEach(cleanupFakes)

let local: string

beforeEach(async () => {
  local = realpathSync(await mkdtemp(join(tmpdir(), "aml-modal-local-")))
  await mkdir(join(local, "a/b/c"), { recursive: true })
  await writeFile(join(local, "a/b/c/deep.txt"), "deep")
  await writeFile(join(local, "gone.txt"), "gone")
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

test("options: a frozen provider named modal; every option error", () => {
  const provider = modalSandbox({ client: {} })
  expect([provider.name, Object.isFrozen(provider)]).toEqual(["modal", true])
  expectExact(syncThrow(() => modalSandbox(null as any)), TypeError, "Modal Sandbox options must be an object")
  expectExact(syncThrow(() => modalSandbox({ client: {}, config: {} } as any)), TypeError, "Modal Sandbox accepts either client or config, not both")
  for (const name of ["image", "appName", "setup", "workspace"]) {
    for (const value of ["", " ", 1]) {
      expectExact(syncThrow(() => modalSandbox({ [name]: value } as any)), TypeError, `Modal Sandbox ${name} must be a non-empty string`)
    }
  }
  expectExact(syncThrow(() => modalSandbox({ maxOutputBytes: 0 })), RangeError, "Modal Sandbox maxOutputBytes must be a positive safe integer")
})

describe("the optional peer modal", () => {
  test("missing, the error names it and keeps the import failure as its cause", async () => {
    vi.resetModules()
    vi.doMock("modal", () => {
      throw new Error("Cannot find package 'modal'")
    })
    try {
      const { modalSandbox: isolated } = await import("../lib/sandbox/remote/modal.js")
      const error = await rejection(isolated({ workspace: local }).acquire(request()))
      expectExact(error, Error, 'Modal Sandbox requires the optional peer dependency "modal" (npm install modal) or an application-supplied client')
      expect(error.cause).toBeInstanceOf(Error)
    } finally {
      vi.doUnmock("modal")
      vi.resetModules()
    }
  })

  test("installed, it is loaded on first acquisition and its ModalClient built from config", async () => {
    // No token anywhere: the real ModalClient refuses to construct, before any request.
    const saved = { id: process.env.MODAL_TOKEN_ID, secret: process.env.MODAL_TOKEN_SECRET, home: process.env.HOME }
    delete process.env.MODAL_TOKEN_ID
    delete process.env.MODAL_TOKEN_SECRET
    process.env.HOME = local
    try {
      const provider = modalSandbox({ workspace: local, config: { environment: "aml-test" } })
      const error = await rejection(provider.acquire(request()))
      expect(error.message).toMatch(/token_id/)
    } finally {
      for (const [key, value] of [["MODAL_TOKEN_ID", saved.id], ["MODAL_TOKEN_SECRET", saved.secret], ["HOME", saved.home]] as const) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    }
  })
})

describe("lifecycle", () => {
  test("app (createIfMissing) → registry image → create → upload → extract under /workspace → setup → exec → reconcile → terminate", async () => {
    const { client, controls } = await fakeModal()
    const lease = await modalSandbox({ client, workspace: local, appName: "aml-test", image: "registry.example/img:1", create: { timeoutMs: 60000 }, setup: "printf s > setup.txt" }).acquire(request({ cwd: "a/b" }))
    expect(lease.id).toBe("modal:sb-modal-1")
    expect(lease.handle.kind).toBe("modal")
    const result = await lease.runtime.exec("sh", ["-c", "pwd; cat c/deep.txt; echo err >&2; exit 2"], { env: { K: "v" } })
    expect(result).toEqual({ exitCode: 2, stdout: `${join(controls.home, "workspace/a/b")}\ndeep`, stderr: "err\n" })
    await lease.runtime.exec("sh", ["-c", "rm /workspace/gone.txt; mkdir -p /workspace/x/y; printf z > /workspace/x/y/z.txt"])
    await lease.release()
    expect((await readdir(local)).sort()).toEqual(["a", "x"])
    expect(await readFile(join(local, "x/y/z.txt"), "utf8")).toBe("z")
    // setup ran in the acquired cwd below /workspace
    expect(await readFile(join(local, "a/b/setup.txt"), "utf8")).toBe("s")
    expect(controls.calls).toEqual([
      'apps.fromName aml-test {"createIfMissing":true}',
      "images.fromRegistry registry.example/img:1",
      'sandboxes.create {"timeoutMs":60000}',
      "filesystem.copyFromLocal",
      "exec sh",
      "exec sh",
      "exec sh",
      "exec sh",
      "exec tar",
      "filesystem.copyToLocal",
      "terminate",
    ])
    // setup: an empty environment below /workspace; exec: its environment; both in text mode.
    expect(controls.execParams[1]).toEqual({ mode: "text", stdout: "pipe", stderr: "pipe", workdir: "/workspace/a/b", env: {} })
    expect(controls.execParams[2]).toEqual({ mode: "text", stdout: "pipe", stderr: "pipe", workdir: "/workspace/a/b", env: { K: "v" } })
  })

  test("defaults: app aml-jsx and the AML image; read-only refuses exec and spawn and skips reconciliation", async () => {
    const { client, controls } = await fakeModal()
    const lease = await modalSandbox({ client, workspace: local }).acquire(request({ access: "read-only" }))
    const message = "Modal Sandbox cannot execute under read-only access because its transferred Workspace is not mounted read-only"
    expectExact(await rejection(lease.runtime.exec("true")), Error, message)
    expectExact(await rejection(lease.runtime.spawn("true")), Error, message)
    await lease.release()
    expect(controls.calls.slice(0, 2)).toEqual(['apps.fromName aml-jsx {"createIfMissing":true}', "images.fromRegistry wearesingular/aml-agent-sandbox:latest"])
    expect(controls.calls.at(-1)).toBe("terminate")
    expect(controls.calls).not.toContain("open r")
  })

  test("sandboxProviderConformance", async () => {
    const { client } = await fakeModal()
    await sandboxProviderConformance(modalSandbox({ client, workspace: local }))
  })
})

describe("failures", () => {
  test("setup failure reports stderr and terminates; hydration failing remotely names the exit code", async () => {
    const { client, controls } = await fakeModal()
    const error = await rejection(modalSandbox({ client, workspace: local, setup: "echo bad >&2; exit 9" }).acquire(request()))
    expectExact(error, Error, "Modal Sandbox setup failed with exit code 9: bad")
    expect(controls.calls.at(-1)).toBe("terminate")
    controls.failures.add("filesystem.copyFromLocal")
    const upload = await rejection(modalSandbox({ client, workspace: local }).acquire(request()))
    expectExact(upload, Error, "Modal Sandbox Workspace hydration failed: filesystem.copyFromLocal broke")
    controls.failures.delete("filesystem.copyFromLocal")
    controls.upload = Buffer.from("not a gzip archive")
    const remote = await rejection(modalSandbox({ client, workspace: local }).acquire(request()))
    expect(remote.constructor).toBe(Error)
    expect(remote.message).toMatch(/^Modal Sandbox Workspace hydration failed with exit code [1-9]\d*: .*tar/s)
    expect(controls.calls.at(-1)).toBe("terminate")
  })

  test("a traversal entry in the reconciled archive is refused and nothing is written outside", async () => {
    const { client, controls } = await fakeModal()
    const lease = await modalSandbox({ client, workspace: local }).acquire(request())
    controls.download = hostileArchive("a/../../evil.txt")
    const error = await rejection(lease.release())
    expectExact(error, Error, 'Modal Sandbox Workspace reconciliation failed: Workspace archive contains unsafe path "a/../../evil.txt"')
    expect(await readFile(join(local, "gone.txt"), "utf8")).toBe("gone")
    expect(controls.calls.at(-1)).toBe("terminate")
  })

  test("an empty or cut-off plain tar download is refused: nothing on the host is deleted", async () => {
    const { client, controls } = await fakeModal()
    const lease = await modalSandbox({ client, workspace: local }).acquire(request())
    controls.download = Buffer.alloc(0)
    const error = await rejection(lease.release())
    expectExact(error, Error, "Modal Sandbox Workspace reconciliation failed: the remote archive is not a complete tar archive")
    expect((await readdir(local)).sort()).toEqual(["a", "gone.txt"])
    const again = await modalSandbox({ client, workspace: local }).acquire(request())
    controls.download = undefined
    await again.runtime.exec("true")
    const whole = await readFile(join(controls.home, "workspace/a/b/c/deep.txt"))
    expect(whole.toString()).toBe("deep")
    // The first 1 KiB of a real remote archive: headers without the end-of-archive blocks.
    const { execFileSync } = await import("node:child_process")
    controls.download = execFileSync("tar", ["-cf", "-", "-C", join(controls.home, "workspace"), "."]).subarray(0, 1536)
    expectExact(await rejection(again.release()), Error, "Modal Sandbox Workspace reconciliation failed: the remote archive is not a complete tar archive")
    expect((await readdir(local)).sort()).toEqual(["a", "gone.txt"])
  })

  test("a command timeout terminates the Sandbox with a TimeoutError", async () => {
    const { client, controls } = await fakeModal()
    const lease = await modalSandbox({ client, workspace: local }).acquire(request())
    const error = await rejection(lease.runtime.exec("sleep", ["5"], { timeoutMs: 100 }))
    expect(error).toBeInstanceOf(DOMException)
    expect([error.name, error.message]).toEqual(["TimeoutError", "Modal Sandbox command timed out after 100 ms"])
    expect(controls.calls.at(-1)).toBe("terminate")
    await lease.release()
    expect(controls.calls.filter((call) => call === "terminate")).toHaveLength(1)
  })
})

test("exec passes timeoutMs and env through to Modal's exec", async () => {
  const { client, controls } = await fakeModal()
  const lease = await modalSandbox({ client, workspace: local }).acquire(request())
  const result = await lease.runtime.exec("sh", ["-c", 'printf %s "$TOKEN"'], { cwd: "a", env: { TOKEN: "t 1" }, timeoutMs: 7000 })
  expect(result).toEqual({ exitCode: 0, stdout: "t 1", stderr: "" })
  expect(controls.execParams.at(-1)).toEqual({ mode: "text", stdout: "pipe", stderr: "pipe", workdir: "/workspace/a", env: { TOKEN: "t 1" }, timeoutMs: 7000 })
  await lease.release()
})

test("a Workspace over 4 MiB hydrates and reconciles with the default maxOutputBytes, and with a tiny one", async () => {
  const big = randomBytes(5 * 1024 * 1024)
  await writeFile(join(local, "big.bin"), big)
  for (const maxOutputBytes of [undefined, 1000]) {
    const { client, controls } = await fakeModal()
    const options = maxOutputBytes === undefined ? { client, workspace: local } : { client, workspace: local, maxOutputBytes }
    const lease = await modalSandbox(options).acquire(request())
    expect((await readFile(join(controls.home, "workspace/big.bin"))).equals(big)).toBe(true)
    await lease.runtime.exec("sh", ["-c", "head -c 4194304 /workspace/big.bin > /workspace/big.bin.head && mv /workspace/big.bin.head /workspace/big.bin; head -c 6000000 /dev/zero > /workspace/zeros.bin"])
    await lease.release()
    expect((await readFile(join(local, "big.bin"))).equals(big.subarray(0, 4 * 1024 * 1024))).toBe(true)
    expect((await readFile(join(local, "zeros.bin"))).length).toBe(6_000_000)
    await writeFile(join(local, "big.bin"), big)
    await rm(join(local, "zeros.bin"))
  }
})

test("spawn runs in binary mode: output bytes arrive undecoded", async () => {
  const { client, controls } = await fakeModal()
  const lease = await modalSandbox({ client, workspace: local }).acquire(request())
  const child = await lease.runtime.spawn("sh", ["-c", "printf '\\377\\376ok'"])
  const chunks: Uint8Array[] = []
  for await (const chunk of child.stdout as any) chunks.push(chunk)
  expect([...Buffer.concat(chunks)]).toEqual([0xff, 0xfe, 0x6f, 0x6b])
  expect(await child.wait()).toEqual({ exitCode: 0 })
  expect(controls.execParams.at(-1)).toMatchObject({ mode: "binary", workdir: "/workspace" })
  await lease.release()
})

test("exec: the output budget is enforced while streaming, so an endless command rejects instead of buffering forever", async () => {
  const { client } = await fakeModal()
  const lease = await modalSandbox({ client, workspace: local, maxOutputBytes: 2000 }).acquire(request())
  // `yes` never ends: collecting everything first (as before) never settled.
  expectExact(await rejection(lease.runtime.exec("yes")), RangeError, "Modal Sandbox command output exceeded 2000 bytes")
  // The lease is still usable, and release terminates the Sandbox (and the stray command).
  expect(await lease.runtime.exec("sh", ["-c", "printf ok"])).toMatchObject({ exitCode: 0, stdout: "ok" })
  await lease.release()
})

test("spawn: streamed stdin/stdout through Modal's process API, input closed once wait() reported the exit, process output bounded", async () => {
  const { client, controls } = await fakeModal()
  const lease = await modalSandbox({ client, workspace: local, maxOutputBytes: 2000 }).acquire(request())
  const child = await lease.runtime.spawn("cat")
  const writer = child.stdin.getWriter()
  await writer.write(new TextEncoder().encode("ping"))
  const reader = child.stdout.getReader()
  expect(Buffer.from((await reader.read()).value!).toString()).toBe("ping")
  await writer.close()
  expect(await reader.read()).toEqual({ done: true, value: undefined })
  expect(await child.wait()).toEqual({ exitCode: 0 })
  const done = await lease.runtime.spawn("true")
  // Ended remotely but not yet reported by wait(): the write goes to Modal, which drops it.
  await controls.exits.at(-1)
  await new Promise((resolve) => setImmediate(resolve)) // the exit has reached every listener
  const late = done.stdin.getWriter()
  await late.write(new Uint8Array([1]))
  late.releaseLock()
  expect(await done.wait()).toEqual({ exitCode: 0 })
  expectExact(await rejection(done.stdin.getWriter().write(new Uint8Array([1]))), Error, "Modal Sandbox process input is closed")
  const noisy = await lease.runtime.spawn("sh", ["-c", "yes | head -c 3000"])
  expectExact(await rejection((async () => { for await (const _ of noisy.stdout as any) {} })()), RangeError, "Modal Sandbox process output exceeded 2000 bytes")
  await noisy.wait().catch(() => {})
  await lease.release()
})

test.skipIf(!process.env.MODAL_TOKEN_ID)("live Modal (needs MODAL_TOKEN_ID, MODAL_TOKEN_SECRET and the modal package; skipped without them)", async () => {
  const lease = await modalSandbox({ workspace: local, image: process.env.AML_MODAL_IMAGE ?? "alpine:3.21" }).acquire(request())
  try {
    expect((await lease.runtime.exec("cat", ["gone.txt"])).stdout).toBe("gone")
  } finally {
    await lease.release()
  }
})
