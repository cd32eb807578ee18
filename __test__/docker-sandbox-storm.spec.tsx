// dockerSandbox cancellation storm (issue 21 §3): evaluations aborted at spread-out moments
// between 0 and 4 s — during container creation, setup, or a running <Script> — must each
// settle only after their container is removed, as a Local Sandbox settles only after its
// processes are reaped. At every rejection, synchronously (nothing else runs meanwhile), the
// daemon is asked for the evaluation's containers and must know none.
//
// A private daemon (support/private-dockerd.ts) keeps these containers out of the shared
// daemon, whose specs assert an empty `docker ps -a` after each of their tests.
import { execFileSync } from "node:child_process"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, expect } from "vitest"

import { AmlRuntime, Sandbox, Script, dockerSandbox } from "@aml-jsx/sdk"
import type { SandboxAcquireRequest } from "@aml-jsx/sdk"

import { startDockerDaemon, TEST_IMAGE } from "./support/docker.js"
import { startPrivateDaemon, type PrivateDaemon } from "./support/private-dockerd.js"
import { testNeeding } from "./support/test-groups.js"

// Needs a Docker daemon (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const test = testNeeding("docker")

const EVALUATIONS = 50
const CONCURRENCY = 10
const MAX_DELAY_MS = 4000

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "aml-docker-storm-")))
const previousHost = process.env.DOCKER_HOST
let daemon: PrivateDaemon

beforeAll(async () => {
  // Installs dockerd and builds the busybox image in the shared daemon; copied from there.
  startDockerDaemon()
  daemon = await startPrivateDaemon()
  daemon.docker(["load"], execFileSync("docker", ["save", TEST_IMAGE], { maxBuffer: 1 << 30 }))
  // dockerSandbox() reads DOCKER_HOST at each acquisition; this fork only.
  process.env.DOCKER_HOST = daemon.host
}, 600_000)

afterAll(async () => {
  if (previousHost === undefined) delete process.env.DOCKER_HOST
  else process.env.DOCKER_HOST = previousHost
  await daemon?.stop()
  rmSync(workspace, { force: true, recursive: true })
}, 60_000)

/** Every container (running, exited or being removed) whose name is `aml-<prefix>-…`. */
function containersOf(evaluationId: string): string[] {
  // The provider names containers for the first 12 characters of the evaluation id.
  const prefix = `aml-${evaluationId.slice(0, 12).replace(/[^a-zA-Z0-9_.-]/g, "-")}-`
  return daemon
    .docker(["ps", "-a", "--format", "{{.Names}}"])
    .split("\n")
    .filter((name) => name.startsWith(prefix))
}

/** A fixed-seed generator: the same spread of abort moments on every run. */
function seeded(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

interface Outcome {
  index: number
  delayMs: number
  reason: unknown
  error: unknown
  evaluationId: string | undefined
  leftOver: string[]
}

async function stormOne(index: number, delayMs: number): Promise<Outcome> {
  // Every other one runs a setup command, so aborts also land in a setup exec.
  const docker = dockerSandbox({ image: TEST_IMAGE, workspace, ...(index % 2 === 1 ? { setup: "sleep 1" } : {}) })
  let evaluationId: string | undefined
  // Delegates unchanged; only notes which evaluation the request belongs to.
  const provider = {
    name: "docker",
    acquire(request: SandboxAcquireRequest) {
      evaluationId = request.evaluationId
      return docker.acquire(request)
    },
  }
  const controller = new AbortController()
  const reason = new Error(`storm ${index} cancelled after ${delayMs} ms`)
  const timer = setTimeout(() => controller.abort(reason), delayMs)
  const outcome: Outcome = { index, delayMs, reason, error: undefined, evaluationId: undefined, leftOver: [] }
  try {
    await new AmlRuntime().evaluate(
      <Sandbox provider={provider} access="read-write">
        <Script command="sh" args={["-c", "sleep 30"]} />
      </Sandbox>,
      { signal: controller.signal },
    )
    outcome.error = new Error("the evaluation resolved")
  } catch (error) {
    // At the rejection itself: a synchronous look, no other callback runs before it.
    outcome.error = error
    outcome.evaluationId = evaluationId
    if (evaluationId !== undefined) outcome.leftOver = containersOf(evaluationId)
  } finally {
    clearTimeout(timer)
  }
  return outcome
}

test(
  `${EVALUATIONS} evaluations aborted between 0 and ${MAX_DELAY_MS} ms reject with the reason and leave no container at rejection`,
  async () => {
    const random = seeded(21)
    const delays = Array.from({ length: EVALUATIONS }, () => Math.floor(random() * (MAX_DELAY_MS + 1)))
    const outcomes: Outcome[] = []
    let next = 0
    const worker = async () => {
      while (next < delays.length) {
        const index = next++
        outcomes.push(await stormOne(index, delays[index]))
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))

    expect(outcomes).toHaveLength(EVALUATIONS)
    const wrong = outcomes.filter((o) => o.error !== o.reason).map((o) => `${o.index} (${o.delayMs} ms): ${String(o.error)}`)
    expect(wrong).toEqual([])
    // An evaluation aborted before its Sandbox asked the provider acquired nothing to check.
    const left = outcomes.filter((o) => o.leftOver.length > 0).map((o) => `${o.index} (${o.delayMs} ms): ${o.leftOver.join(", ")}`)
    expect(left).toEqual([])
    expect(daemon.docker(["ps", "-aq"]).trim()).toBe("")
  },
  300_000,
)
