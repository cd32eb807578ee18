// localSandbox process lifetime under cancellation and timeouts (issue 8 §3): a process that
// is still starting when the abort lands is tracked, so the release kills and reaps it before
// evaluate() rejects; a timed-out <Script> says it timed out.
import { readdirSync, readFileSync, realpathSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Sandbox, Script, localSandbox } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

import { delay } from "./support/async.js"
import { expectExact, rejection } from "./support/errors.js"

let directory: string

beforeAll(async () => {
  directory = realpathSync(await mkdtemp(join(tmpdir(), "aml-local-reaping-")))
})

afterAll(async () => {
  await rm(directory, { force: true, recursive: true })
})

/**
 * Pids whose command line contains `marker`, and zombie children of this process or of its
 * children (AML's trees are children of its process supervisor, a child of this process).
 */
function survivors(marker: string): string[] {
  const found: string[] = []
  const parents = new Map<string, string>()
  const zombies: string[] = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || pid === String(process.pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(marker)) found.push(`${pid} alive`)
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      parents.set(pid, ppid)
      if (state === "Z") zombies.push(pid)
    } catch {
      // The process ended while it was being read.
    }
  }
  const me = String(process.pid)
  for (const pid of zombies) {
    const ppid = parents.get(pid)
    if (ppid === me || (ppid !== undefined && parents.get(ppid) === me)) found.push(`${pid} zombie`)
  }
  return found
}

/** A `sleep` duration unique to one evaluation, so its process can be found by argv. */
const marker = (run: number, i: number) => `30.${String(run).padStart(2, "0")}${String(i).padStart(4, "0")}1`

/** Every `sleep` marker visible in /proc right now. */
function liveMarkers(): string[] {
  const found: string[] = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0")
      if (argv[0] === "sleep" && argv[1] !== undefined) found.push(argv[1])
    } catch {
      // The process ended while it was being read.
    }
  }
  return found
}

/**
 * Runs `count` evaluations, `batch` at a time, each aborted after a varying delay, and
 * watches /proc the whole time: once an evaluation has rejected, its process must never be
 * seen again (neither still running nor started late by a spawn that was in flight).
 */
async function storm(run: number, count: number, tree: (marker: string) => unknown, runtime: AmlRuntime) {
  const rejectedMarkers = new Set<string>()
  const seenAfterRejection = new Set<string>()
  const scan = () => {
    for (const m of liveMarkers()) if (rejectedMarkers.has(m)) seenAfterRejection.add(m)
  }
  const watcher = setInterval(scan, 2)
  let rejected = 0
  const one = async (i: number) => {
    const controller = new AbortController()
    const reason = new Error(`stop ${i}`)
    const evaluation = rejection(runtime.evaluate(tree(marker(run, i)) as any, { signal: controller.signal }))
    // Spread over 0–200 ms: acquisition, a spawn queued behind its batch's others, the run.
    if (i % 20 === 0) queueMicrotask(() => controller.abort(reason))
    else setTimeout(() => controller.abort(reason), (i * 37) % 200)
    const error: any = await evaluation
    // The reason itself, or (an Agent whose started provider rejected with it) its wrapper.
    if (error !== reason) {
      expect(error.message).toMatch(/^Agent "[^"]+" \(span-\d+\) failed$/)
      expect(error.cause).toBe(reason)
    }
    rejected++
    rejectedMarkers.add(marker(run, i))
    scan()
  }
  const batch = 20
  try {
    for (let start = 0; start < count; start += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - start) }, (_, k) => one(start + k)))
    }
    // A spawn still queued when its evaluation rejected would show up within this window.
    await delay(300)
    scan()
  } finally {
    clearInterval(watcher)
  }
  const zombies = survivors("\0never\0")
  return { left: [...seenAfterRejection, ...zombies], rejected }
}

describe("a process still starting when the abort lands", () => {
  test("<Script> through runtime.exec: nothing is left when evaluate() rejects (200 evaluations)", async () => {
    const runtime = new AmlRuntime({ sandboxProvider: localSandbox({ workspace: directory }) })
    const tree = (m: string) => (
      <Sandbox access="read-write">
        <Script command="sleep" args={[m]} />
      </Sandbox>
    )
    const { left, rejected } = await storm(1, 200, tree, runtime)
    expect(rejected).toBe(200)
    expect(left).toEqual([])
  })

  test("runtime.spawn from a provider: nothing is left when evaluate() rejects (200 evaluations)", async () => {
    const agent = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      // The provider does not wait for its spawn: it settles as soon as the abort lands, so
      // the Sandbox release may begin while the spawn is still in flight.
      respond: (request, context) =>
        new Promise((_, reject) => {
          context.sandbox!.lease.runtime.spawn("sleep", [request.prompt]).catch(() => {})
          context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true })
        }),
    })
    const runtime = new AmlRuntime({ agentProvider: agent, sandboxProvider: localSandbox({ workspace: directory }) })
    const tree = (m: string) => (
      <Sandbox access="read-write">
        <Agent>{m}</Agent>
      </Sandbox>
    )
    const { left, rejected } = await storm(2, 200, tree, runtime)
    expect(rejected).toBe(200)
    expect(left).toEqual([])
  })
})

describe("timeouts", () => {
  test("a local-Sandbox <Script> past timeoutMs fails as the host form does", async () => {
    const runtime = new AmlRuntime({ sandboxProvider: localSandbox({ workspace: directory }) })
    const m = marker(3, 1)
    const error = await rejection(
      runtime.evaluate(
        <Sandbox access="read-write">
          <Script command="sleep" args={[m]} timeoutMs={150} />
        </Sandbox>,
      ),
    )
    expectExact(error, EvaluationError, "<Script> timed out after 150 ms")
    expect(error.cause).toBeInstanceOf(DOMException)
    expect(error.cause.name).toBe("TimeoutError")
    expect(error.cause.message).toBe("Local Sandbox command timed out after 150 ms")
    expect(survivors(m)).toEqual([])
  })

  test("runtime.exec with timeoutMs rejects with a TimeoutError once the tree is reaped", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(
      Object.freeze({ access: "read-write", cwd: ".", evaluationId: "e", root: ".", signal: new AbortController().signal }),
    )
    try {
      const m = marker(3, 2)
      const error = await rejection(lease.runtime.exec("sh", ["-c", `sleep ${m} & sleep ${m}`], { timeoutMs: 100 }))
      expect(error.name).toBe("TimeoutError")
      expect(error.message).toBe("Local Sandbox command timed out after 100 ms")
      expect(survivors(m)).toEqual([])
      // A command that finishes in time is unaffected.
      expect(await lease.runtime.exec("true", [], { timeoutMs: 10_000 })).toEqual({ exitCode: 0, stderr: "", stdout: "" })
    } finally {
      await lease.release()
    }
  })

  test("a release during an exec stops it: the exec rejects and nothing is left", async () => {
    const lease = await localSandbox({ workspace: directory }).acquire(
      Object.freeze({ access: "read-write", cwd: ".", evaluationId: "e", root: ".", signal: new AbortController().signal }),
    )
    const m = marker(3, 3)
    const running = rejection(lease.runtime.exec("sleep", [m]))
    await delay(50)
    await lease.release()
    expect(survivors(m)).toEqual([])
    expect((await running).message).toBe("Local Sandbox lease was released while the command ran")
  })
})
