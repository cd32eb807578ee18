// localSandbox (INVENTORY BS-1): options, Workspace boundary and real-path checks, the
// read-only refusal, literal exec with bounded output, setup, spawn and release.
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { realpathSync } from "node:fs"

import { afterAll, beforeAll, describe, expect, test } from "vitest"

import { Agent, AmlRuntime, Sandbox, localSandbox } from "@aml-jsx/sdk"
import type { SandboxAcquireRequest, SandboxLease } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, sandboxProviderConformance } from "@aml-jsx/sdk/testing"
import { rejection } from "./support/errors.js"

let directory: string
let outside: string

beforeAll(async () => {
  directory = realpathSync(await mkdtemp(join(tmpdir(), "aml-local-sandbox-")))
  outside = realpathSync(await mkdtemp(join(tmpdir(), "aml-local-outside-")))
  await mkdir(join(directory, "repo/src"), { recursive: true })
  await writeFile(join(directory, "repo/file.txt"), "data")
  await symlink(outside, join(directory, "escape"))
})

afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
  await rm(outside, { recursive: true, force: true })
})

const request = (overrides: Partial<SandboxAcquireRequest> = {}): SandboxAcquireRequest =>
  Object.freeze({ access: "read-write", cwd: ".", evaluationId: "e", root: ".", signal: new AbortController().signal, ...overrides })

async function using<T>(lease: SandboxLease<any>, body: (lease: SandboxLease<any>) => Promise<T>) {
  try {
    return await body(lease)
  } finally {
    await lease.release()
  }
}

describe("options", () => {
  test("a frozen provider named local; option errors", () => {
    const provider = localSandbox()
    expect(provider.name).toBe("local")
    expect(Object.isFrozen(provider)).toBe(true)
    expect(() => localSandbox(null as any)).toThrow(new TypeError("Local Sandbox options must be an object"))
    for (const maxOutputBytes of [0, -1, 1.5, "1"]) {
      expect(() => localSandbox({ maxOutputBytes: maxOutputBytes as any })).toThrow(
        new RangeError("Local Sandbox maxOutputBytes must be a positive safe integer"),
      )
    }
    for (const name of ["setup", "workspace"] as const) {
      for (const value of ["", " x", "a\0b", 1]) {
        expect(() => localSandbox({ [name]: value } as any)).toThrow(
          new TypeError(`Local Sandbox ${name} must be a non-empty normalized string`),
        )
      }
    }
  })
})

describe("acquisition", () => {
  test("requires a Workspace (active materialization or fallback)", async () => {
    const error = await rejection(localSandbox().acquire(request()))
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe("Local Sandbox requires an active Workspace or configured workspace")
    const lease = await localSandbox().acquire(request({ workspace: { directory } as any }))
    expect(lease.handle).toEqual({ directory, kind: "local" })
    await lease.release()
  })

  test("lease id, frozen handle and runtime echoing the request", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(request({ root: "repo", cwd: "repo/src" }))
    expect(lease.id).toMatch(/^local:[0-9a-f-]{36}$/)
    expect(lease.runtime).toMatchObject({ access: "read-write", cwd: "repo/src", root: "repo" })
    expect(Object.isFrozen(lease) && Object.isFrozen(lease.runtime) && Object.isFrozen(lease.handle)).toBe(true)
    await lease.release()
    await lease.release()
  })

  test.each([
    [{ root: "missing" }, "Local Sandbox root must be a directory"],
    [{ root: "repo/file.txt", cwd: "repo/file.txt" }, "Local Sandbox root must be a directory"],
    [{ root: "escape" }, "Local Sandbox root resolves outside its configured boundary"],
    [{ root: "repo", cwd: "repo/missing" }, "Local Sandbox cwd must be a directory"],
    [{ root: "repo", cwd: "escape" }, "Local Sandbox cwd resolves outside its configured boundary"],
  ])("%j: %s", async (paths, message) => {
    const error = await rejection(localSandbox({ workspace: directory }).acquire(request(paths)))
    expect(error.message).toBe(message)
  })

  // The documented messages stay exact and do not say which path; the cause does.
  test.each([
    [{ root: "missing" }, "no such directory", "missing"],
    [{ root: "repo", cwd: "repo/missing" }, "no such directory", "repo/missing"],
    [{ root: "repo/file.txt", cwd: "repo/file.txt" }, "not a directory", "repo/file.txt"],
  ])("%j: the cause of 'must be a directory' says %s and names the path", async (paths, what, path) => {
    const error = await rejection(localSandbox({ workspace: directory }).acquire(request(paths)))
    expect(error.message).toMatch(/^Local Sandbox (root|cwd) must be a directory$/)
    expect(error.cause?.message).toBe(`${what}: ${join(directory, path)}`)
  })

  test("conformance passes with a configured workspace", async () => {
    await sandboxProviderConformance(localSandbox({ workspace: directory }))
  })
})

describe("runtime", () => {
  test("read-only access refuses every exec and spawn", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(request({ access: "read-only" }))
    await using(lease, async ({ runtime }) => {
      const message = "Local Sandbox cannot execute under read-only access because host processes cannot enforce it"
      expect((await rejection(runtime.exec("true"))).message).toBe(message)
      expect((await rejection(runtime.spawn("true"))).message).toBe(message)
    })
  })

  test("exec is literal, runs in the logical cwd and returns non-zero exits as results", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(request({ root: "repo", cwd: "repo/src" }))
    await using(lease, async ({ runtime }) => {
      expect(await runtime.exec("node", ["-e", "process.stdout.write(process.cwd())"])).toEqual({
        exitCode: 0,
        stderr: "",
        stdout: join(directory, "repo/src"),
      })
      const other = await runtime.exec("node", ["-e", "process.stdout.write(process.cwd())"], { cwd: "repo" })
      expect(other.stdout).toBe(join(directory, "repo"))
      const failed = await runtime.exec("sh", ["-c", "echo '$HOME' >&2; exit 3"])
      expect(failed).toEqual({ exitCode: 3, stderr: "$HOME\n", stdout: "" })
      const env = await runtime.exec("node", ["-e", "process.stdout.write(process.env.AML_X)"], { env: { AML_X: "y" } })
      expect(env.stdout).toBe("y")
      expect((await rejection(runtime.exec("true", [], { cwd: "." }))).message).toBe(
        "Sandbox command cwd resolves outside its configured root",
      )
    })
  })

  test("combined output beyond maxOutputBytes is a RangeError", async () => {
    const lease = await localSandbox({ workspace: directory, maxOutputBytes: 10 }).acquire(request())
    await using(lease, async ({ runtime }) => {
      const error = await rejection(runtime.exec("sh", ["-c", "printf 123456; printf 123456 >&2"]))
      expect(error).toBeInstanceOf(RangeError)
      expect(error.message).toBe("Local Sandbox command output exceeded 10 bytes")
      expect((await runtime.exec("printf", ["0123456789"])).stdout).toBe("0123456789")
    })
  })

  test("setup runs with sh -lc on every acquisition; a failure rejects acquisition", async () => {
    const provider = localSandbox({ workspace: directory, setup: "echo run >> .setup-log" })
    await (await provider.acquire(request())).release()
    await (await provider.acquire(request({ root: "repo", cwd: "repo" }))).release()
    const lease = await provider.acquire(request())
    await using(lease, async ({ runtime }) => {
      expect((await runtime.exec("cat", [".setup-log"])).stdout).toBe("run\nrun\n")
      expect((await runtime.exec("cat", ["repo/.setup-log"])).stdout).toBe("run\n")
    })
    const error = await rejection(localSandbox({ workspace: directory, setup: "echo broken >&2; exit 4" }).acquire(request()))
    expect(error.message).toBe("Local Sandbox setup failed with exit code 4: broken")
  })

  test("spawn streams; release kills every tracked process", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(request())
    const echo = await lease.runtime.spawn("cat")
    const writer = echo.stdin.getWriter()
    await writer.write(new TextEncoder().encode("ping"))
    await writer.close()
    expect(await new Response(echo.stdout).text()).toBe("ping")
    expect(await echo.wait()).toEqual({ exitCode: 0 })
    const sleeper = await lease.runtime.spawn("sleep", ["30"])
    await lease.release()
    expect((await rejection(sleeper.wait())).message).toMatch(/^Local process exited from signal SIG(TERM|KILL)$/)
  })

  test("inside <Sandbox>: an Agent gets the Local session and can exec through it", async () => {
    let stdout = ""
    const agent = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      respond: async (_request, context) => {
        stdout = (await context.sandbox!.lease.runtime.exec("pwd")).stdout
        return { text: "ok" }
      },
    })
    const runtime = new AmlRuntime({ agentProvider: agent, sandboxProvider: localSandbox({ workspace: directory }) })
    const tree = (
      <Sandbox access="read-write" root="repo">
        <Agent cwd="src">x</Agent>
      </Sandbox>
    )
    expect(await runtime.evaluate(tree)).toBe("ok")
    // The runtime keeps the Sandbox cwd; the Agent's own cwd is in its session.
    expect(stdout.trim()).toBe(join(directory, "repo"))
  })
})
