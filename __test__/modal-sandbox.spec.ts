// modalSandbox (INVENTORY BS-4) against an injected client implementing the SDK surface it
// uses (support/remote-sandbox-fakes.ts). The lifecycle is shared with Daytona
// (lib/remote-sandbox.js, proven in daytona-sandbox.spec.ts); this file proves Modal's own
// options, SDK calls, guest root, streams, messages and the lazy optional peer.
import { mkdir, mkdtemp, readFile, rm, writeFile, readdir } from "node:fs/promises"
import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterEach, beforeEach, describe, expect, test } from "vitest"

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

test("without a client the optional peer modal is loaded lazily; missing, the error names it", async () => {
  const error = await rejection(modalSandbox({ workspace: local }).acquire(request()))
  expectExact(error, Error, 'Modal Sandbox requires the optional peer dependency "modal" (npm install modal) or an application-supplied client')
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
      "open w",
      "exec sh",
      "exec sh",
      "exec sh",
      "exec sh",
      "exec sh",
      "open r",
      "terminate",
    ])
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
    controls.failures.add("open w")
    const upload = await rejection(modalSandbox({ client, workspace: local }).acquire(request()))
    expectExact(upload, Error, "Modal Sandbox Workspace hydration failed: open w broke")
    controls.failures.delete("open w")
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

test("spawn: streamed stdin/stdout through Modal's process API, input closed after exit, process output bounded", async () => {
  const { client } = await fakeModal()
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
