// dockerSandbox (INVENTORY BS-2) against the real daemon (scripts/docker-daemon.sh, busybox
// test image): options, acquisition, exec, spawn with streamed stdio, the read-only mount,
// cancellation and timeouts removing the container, setup failures, a missing image,
// conformance and a Workspace + Sandbox + Script + File workflow. After every test no
// container is left (`docker ps -a` is empty).
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, afterEach, beforeAll, describe, expect } from "vitest"

import { AmlRuntime, File, Sandbox, Script, Workspace, dockerSandbox, localWorkspace } from "@aml-jsx/sdk"
import type { SandboxAcquireRequest, SandboxLease } from "@aml-jsx/sdk"
import { sandboxProviderConformance } from "@aml-jsx/sdk/testing"

import { allContainers, startDockerDaemon, TEST_IMAGE } from "./support/docker.js"
import { expectExact, rejection } from "./support/errors.js"
import { testNeeding } from "./support/test-groups.js"

// Needs a Docker daemon (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const test = testNeeding("docker")

let directory: string
let outside: string

beforeAll(async () => {
  startDockerDaemon()
  directory = realpathSync(await mkdtemp(join(tmpdir(), "aml-docker-sandbox-")))
  outside = realpathSync(await mkdtemp(join(tmpdir(), "aml-docker-outside-")))
  await mkdir(join(directory, "repo/src"), { recursive: true })
  await writeFile(join(directory, "repo/file.txt"), "data")
  await symlink(outside, join(directory, "escape"))
}, 600_000)

afterEach(() => {
  expect(allContainers()).toEqual([])
})

afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
  await rm(outside, { recursive: true, force: true })
})

const request = (overrides: Partial<SandboxAcquireRequest> = {}): SandboxAcquireRequest =>
  Object.freeze({ access: "read-write", cwd: ".", evaluationId: "docker-test", root: ".", signal: new AbortController().signal, ...overrides })

const provider = (options = {}) => dockerSandbox({ image: TEST_IMAGE, workspace: directory, ...options })

async function using<T>(lease: SandboxLease<any>, body: (lease: SandboxLease<any>) => Promise<T>) {
  try {
    return await body(lease)
  } finally {
    await lease.release()
  }
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = ""
  for await (const chunk of stream as any) text += Buffer.from(chunk).toString("utf8")
  return text
}

describe("options", () => {
  test("a frozen provider named docker; every option error", () => {
    const sandbox = dockerSandbox()
    expect(sandbox.name).toBe("docker")
    expect(Object.isFrozen(sandbox)).toBe(true)
    expectExact(rejectSync(() => dockerSandbox(null as any)), TypeError, "Docker Sandbox options must be an object")
    expectExact(rejectSync(() => dockerSandbox([] as any)), TypeError, "Docker Sandbox options must be an object")
    for (const maxOutputBytes of [0, -1, 1.5, "1", 2 ** 53]) {
      expectExact(rejectSync(() => dockerSandbox({ maxOutputBytes: maxOutputBytes as any })), RangeError, "Docker Sandbox maxOutputBytes must be a positive safe integer")
    }
    for (const name of ["image", "setup", "user", "workspace"] as const) {
      for (const value of ["", " x", "x ", "a\0b", 1]) {
        expectExact(rejectSync(() => dockerSandbox({ [name]: value } as any)), TypeError, `Docker Sandbox ${name} must be a non-empty normalized string`)
      }
    }
  })
})

function rejectSync(body: () => unknown): any {
  try {
    body()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

describe("acquisition", () => {
  test("one container per lease, named for the evaluation; the lease id is the container id; released containers are gone", async () => {
    const sandbox = provider()
    const first = await sandbox.acquire(request({ evaluationId: "eval id/with:odd chars" }))
    const second = await sandbox.acquire(request())
    try {
    expect(first.id).toMatch(/^[0-9a-f]{64}$/)
    expect(first.id).not.toBe(second.id)
    expect(first.handle).toEqual({ containerId: first.id, kind: "docker" })
    expect(Object.isFrozen(first) && Object.isFrozen(first.handle) && Object.isFrozen(first.runtime)).toBe(true)
    expect(allContainers()).toHaveLength(2)
    expect(allContainers().some((name) => /^aml-eval-id-with-[0-9a-f]{8}$/.test(name))).toBe(true)
    expect(allContainers().some((name) => /^aml-docker-test-[0-9a-f]{8}$/.test(name))).toBe(true)
    } finally {
      await first.release()
      await first.release()
      await second.release()
    }
  })

  test("root and cwd map below /workspace; the runtime keeps the logical paths", async () => {
    const lease = await provider().acquire(request({ root: "repo", cwd: "repo/src" }))
    await using(lease, async () => {
      expect([lease.runtime.access, lease.runtime.root, lease.runtime.cwd]).toEqual(["read-write", "repo", "repo/src"])
      const result = await lease.runtime.exec("sh", ["-c", "pwd; cat ../file.txt"])
      expect(result).toEqual({ exitCode: 0, stderr: "", stdout: "/workspace/src\ndata" })
      const top = await lease.runtime.exec("pwd", [], { cwd: "repo" })
      expect(top.stdout).toBe("/workspace\n")
    })
  })

  test("Workspace boundary errors, before any container exists", async () => {
    const none = dockerSandbox({ image: TEST_IMAGE })
    expectExact(await rejection(none.acquire(request())), TypeError, "Docker Sandbox requires an active Workspace or configured workspace")
    expectExact(await rejection(provider().acquire(request({ root: "missing" }))), Error, "Docker Sandbox root must be a directory")
    expectExact(await rejection(provider().acquire(request({ root: "repo/file.txt" }))), Error, "Docker Sandbox root must be a directory")
    expectExact(await rejection(provider().acquire(request({ root: "escape" }))), Error, "Docker Sandbox root resolves outside its configured boundary")
    expectExact(await rejection(provider().acquire(request({ cwd: "escape" }))), Error, "Docker Sandbox cwd resolves outside its configured boundary")
    await symlink(join(directory, "repo"), join(directory, "repo/src/up"))
    expectExact(await rejection(provider().acquire(request({ root: "repo/src", cwd: "repo/src/up" }))), Error, "Docker Sandbox cwd cannot escape its root")
    await rm(join(directory, "repo/src/up"))
    // The active Workspace wins over the configured fallback.
    expectExact(await rejection(provider().acquire(request({ workspace: { directory: join(directory, "nope") } as any }))), Error, "Docker Sandbox root must be a directory")
  })

  test("a missing image (no registry to pull from) fails acquisition with the daemon's detail", async () => {
    const error = await rejection(provider({ image: "aml-no-such-image:0" }).acquire(request()))
    expect(error.constructor).toBe(Error)
    expect(error.message).toMatch(/^Docker Sandbox failed to start image "aml-no-such-image:0": .+/)
  })

  test("a start failure (an unknown user) removes the created container", async () => {
    const error = await rejection(provider({ user: "no-such-user" }).acquire(request()))
    expect(error.constructor).toBe(Error)
    expect(error.message).toMatch(/^Docker Sandbox failed to start image "aml-test-busybox:1": .*no-such-user/)
  })

  test("setup runs with sh -lc in the mounted Workspace; a non-zero exit fails acquisition and removes the container", async () => {
    const lease = await provider({ setup: "printf prepared > setup.txt" }).acquire(request())
    await lease.release()
    expect(await readFile(join(directory, "setup.txt"), "utf8")).toBe("prepared")
    await rm(join(directory, "setup.txt"))
    const error = await rejection(provider({ setup: "echo broken >&2; exit 3" }).acquire(request()))
    expectExact(error, Error, "Docker Sandbox setup failed with exit code 3: broken")
    const big = await rejection(provider({ setup: "yes | head -c 5000", maxOutputBytes: 100 }).acquire(request()))
    expectExact(big, RangeError, "Docker Sandbox command output exceeded 100 bytes")
  })

  test("an acquisition aborted before it starts rejects with the reason", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    controller.abort(reason)
    expect(await rejection(provider().acquire(request({ signal: controller.signal })))).toBe(reason)
  })

  test("sandboxProviderConformance", async () => {
    await sandboxProviderConformance(provider())
  })
})

describe("exec", () => {
  test("argv is literal, env is explicit, non-zero exits are results, the output budget is shared", async () => {
    const lease = await provider({ maxOutputBytes: 1000 }).acquire(request())
    await using(lease, async () => {
      const result = await lease.runtime.exec("printf", ["%s|", "a b", "$HOME"], { env: { GREETING: "hi" } })
      expect(result).toEqual({ exitCode: 0, stderr: "", stdout: "a b|$HOME|" })
      const env = await lease.runtime.exec("sh", ["-c", 'echo "$GREETING"; echo oops >&2; exit 5'], { env: { GREETING: "hi" } })
      expect(env).toEqual({ exitCode: 5, stderr: "oops\n", stdout: "hi\n" })
      const missing = await lease.runtime.exec("no-such-command")
      // Docker 20.10 reports an exec whose binary is missing as 126 with the OCI message.
      expect([126, 127]).toContain(missing.exitCode)
      expect(missing.stdout + missing.stderr).toMatch(/no-such-command/)
      expectExact(await rejection(lease.runtime.exec("sh", ["-c", "yes | head -c 600; yes | head -c 600 >&2"])), RangeError, "Docker Sandbox command output exceeded 1000 bytes")
    })
    // Overflow removed the container: the released lease finds nothing to remove.
  })

  test("timeoutMs is checked with the Docker wording; a timeout removes the container", async () => {
    const lease = await provider().acquire(request())
    await using(lease, async () => {
      for (const timeoutMs of [0, -1, 1.5, 2 ** 31]) {
        expectExact(await rejection(lease.runtime.exec("true", [], { timeoutMs })), RangeError, "Docker Sandbox timeoutMs must be a positive timer-safe integer")
      }
      const error = await rejection(lease.runtime.exec("sleep", ["30"], { timeoutMs: 200 }))
      expect(error).toBeInstanceOf(DOMException)
      expect([error.name, error.message]).toEqual(["TimeoutError", "Docker Sandbox command timed out after 200 ms"])
      expect(allContainers()).toEqual([])
      const gone = await rejection(lease.runtime.exec("true"))
      expect(gone.constructor).toBe(Error)
      expect(gone.message).toMatch(/^Docker command failed: No such container: [0-9a-f]{64}$/)
    })
  })

  test("cancellation mid-exec rejects with the reason once the container and its processes are gone", async () => {
    const lease = await provider().acquire(request())
    await using(lease, async () => {
      const controller = new AbortController()
      const reason = new Error("cancelled mid-exec")
      const running = lease.runtime.exec("sh", ["-c", "echo started > started.txt; sleep 30"], { signal: controller.signal })
      for (let i = 0; i < 400; i++) {
        if (await readFile(join(directory, "started.txt"), "utf8").catch(() => "")) break
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      controller.abort(reason)
      expect(await rejection(running)).toBe(reason)
      expect(allContainers()).toEqual([])
    })
    await rm(join(directory, "started.txt"))
  })
})

describe("spawn", () => {
  test("streams stdin to stdout, reports the exit code, kill() ends the process group", async () => {
    const lease = await provider().acquire(request())
    await using(lease, async () => {
      const child = await lease.runtime.spawn("sh", ["-c", "while read line; do echo \"got $line\"; done; echo bye >&2; exit 3"])
      expect(child.id).toMatch(/^docker-process:\d+$/)
      const writer = child.stdin.getWriter()
      const reader = child.stdout.getReader()
      await writer.write(new TextEncoder().encode("one\n"))
      expect(Buffer.from((await reader.read()).value!).toString()).toBe("got one\n")
      await writer.write(new TextEncoder().encode("two\n"))
      expect(Buffer.from((await reader.read()).value!).toString()).toBe("got two\n")
      await writer.close()
      expect(await reader.read()).toEqual({ done: true, value: undefined })
      expect(await readAll(child.stderr)).toBe("bye\n")
      expect(await child.wait()).toEqual({ exitCode: 3 })
      expect(await child.wait()).toBe(await child.wait())

      const done = await lease.runtime.spawn("true")
      expect(await done.wait()).toEqual({ exitCode: 0 })
      const late = done.stdin.getWriter()
      expectExact(await rejection(late.write(new Uint8Array([1]))), Error, "Docker Sandbox process input is closed")
      const typed = await lease.runtime.spawn("cat")
      const typedWriter = typed.stdin.getWriter()
      expectExact(await rejection(typedWriter.write("text" as any)), TypeError, "Docker Sandbox process stdin accepts only Uint8Array chunks")
      await typed.kill()
      await typed.wait()

      const tree = await lease.runtime.spawn("sh", ["-c", "sleep 300 & sleep 301 & wait"])
      await new Promise((resolve) => setTimeout(resolve, 300))
      const before = await lease.runtime.exec("sh", ["-c", "ps -o args | grep -c '^sleep 30[01]'"])
      expect(before.stdout).toBe("2\n")
      await tree.kill()
      await tree.kill()
      expect(await tree.wait()).toEqual({ exitCode: 137 })
      const after = await lease.runtime.exec("sh", ["-c", "ps -o args | grep -c '^sleep 30[01]'; true"])
      expect(after.stdout).toBe("0\n")
    })
  })

  test("an aborted spawn is killed and wait() rejects with the reason; release removes live processes", async () => {
    const lease = await provider().acquire(request())
    const controller = new AbortController()
    const child = await lease.runtime.spawn("sleep", ["300"], { signal: controller.signal })
    const reason = new Error("spawn cancelled")
    controller.abort(reason)
    expect(await rejection(child.wait())).toBe(reason)
    await lease.runtime.spawn("sleep", ["300"])
    await lease.release()
  })
})

describe("read-only", () => {
  test("the Workspace mount is :ro; exec and spawn still run, writes to /workspace fail", async () => {
    const lease = await provider().acquire(request({ access: "read-only" }))
    await using(lease, async () => {
      const write = await lease.runtime.exec("sh", ["-c", "echo x > /workspace/denied.txt"])
      expect(write.exitCode).not.toBe(0)
      expect(write.stderr).toMatch(/Read-only file system/)
      const read = await lease.runtime.exec("cat", ["repo/file.txt"])
      expect(read).toEqual({ exitCode: 0, stderr: "", stdout: "data" })
      const outsideMount = await lease.runtime.exec("sh", ["-c", "echo ok > /tmp/x && cat /tmp/x"])
      expect(outsideMount.stdout).toBe("ok\n")
      const child = await lease.runtime.spawn("cat", ["repo/file.txt"])
      expect(await readAll(child.stdout)).toBe("data")
      expect(await child.wait()).toEqual({ exitCode: 0 })
    })
    await expect(readFile(join(directory, "denied.txt"))).rejects.toThrow()
  })
})

describe("workflow", () => {
  test("<Workspace> + <Sandbox provider={dockerSandbox()}> + <Script> + <File>: files land in the Workspace", async () => {
    const workspaceDir = realpathSync(await mkdtemp(join(tmpdir(), "aml-docker-workflow-")))
    try {
      const runtime = new AmlRuntime({ workspaceProvider: localWorkspace({ directory: workspaceDir }) })
      const out = await runtime.evaluate(
        <Workspace id="docker-demo" load={false} save={false}>
          <Sandbox access="read-write" provider={dockerSandbox({ image: TEST_IMAGE })}>
            <Script shell="sh">printf mounted {">"} output.txt; pwd</Script>
            <File path="notes/from-file.txt">written by File</File>
            <Script command="cat" args={["notes/from-file.txt"]} />
          </Sandbox>
        </Workspace>,
      )
      expect(out).toBe("/workspace\nwritten by File")
      expect(await readFile(join(workspaceDir, "output.txt"), "utf8")).toBe("mounted")
      expect(await readFile(join(workspaceDir, "notes/from-file.txt"), "utf8")).toBe("written by File")
    } finally {
      await rm(workspaceDir, { recursive: true, force: true })
    }
  })
})

// examples/docker.tsx through `aml run` (issue 12). Here rather than in a spec of its own:
// every real container must live in this file, whose afterEach checks the daemon is empty.
describe("examples/docker.tsx through aml run", () => {
  test("prints its expected output and removes its container", async () => {
    const { repoRoot, runCli } = await import("./support/cli.js")
    const result = await runCli(["run", "examples/docker.tsx"], { env: { AML_DOCKER_IMAGE: TEST_IMAGE } })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(await readFile(join(repoRoot, "examples/expected/docker.txt"), "utf8"))
  }, 120_000)
})
