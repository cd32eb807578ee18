// Docker Sandbox workloads (issue 11), against the real daemon (scripts/docker-daemon.sh
// starts it and builds the busybox image; a daemon this group started is stopped after):
// - 100 sequential `<Script command="true" />` in one running Docker Sandbox, per Script,
//   next to `docker exec <id> true` through the CLI in the same run (target ≤ 0.5× the CLI);
// - acquire + release of a Docker Sandbox lease (median of 10).
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { AmlRuntime, Sandbox, Script, dockerSandbox } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

const SCRIPTS = 100
const IMAGE = "aml-test-busybox:1"
const daemonScript = fileURLToPath(new URL("../scripts/docker-daemon.sh", import.meta.url))

const answers = () => spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0

export async function dockerBenchmarks() {
  const startedHere = !answers()
  execFileSync("bash", [daemonScript, "start"], { stdio: "inherit" })
  const directory = await mkdtemp(join(tmpdir(), "aml-docker-bench-"))
  const provider = dockerSandbox({ image: IMAGE, workspace: directory })
  const request = { access: "read-write", cwd: ".", evaluationId: "bench", root: ".", signal: new AbortController().signal }
  const lease = await provider.acquire(request)
  try {
    // The running lease, handed to every evaluation without being released in between.
    const running = Object.freeze({ name: "docker", acquire: async () => Object.freeze({ ...lease, release: async () => {} }) })
    const runtime = new AmlRuntime({ sandboxProvider: running })
    const scripts = Array.from({ length: SCRIPTS }, () => jsx(Script, { command: "true" }))
    const tree = jsx(Sandbox, { access: "read-write", children: scripts })
    const ours = await measure('Docker <Script command="true" /> ×100', { items: SCRIPTS, rounds: 3, warmup: 1, run: () => runtime.evaluate(tree) })
    const cli = await measure("docker exec <id> true ×100 (CLI reference)", {
      items: SCRIPTS,
      rounds: 3,
      warmup: 1,
      run: () => {
        for (let i = 0; i < SCRIPTS; i++) execFileSync("docker", ["exec", lease.id, "true"], { stdio: "ignore" })
      },
    })
    console.log(`Docker <Script> / docker exec CLI: ${(ours / cli).toFixed(2)}× (target ≤ 0.5×)`)
    await measure("Docker Sandbox acquire + release", {
      items: 1,
      rounds: 10,
      warmup: 1,
      run: async () => (await provider.acquire(request)).release(),
    })
  } finally {
    await lease.release()
    await rm(directory, { recursive: true, force: true })
    if (startedHere) execFileSync("bash", [daemonScript, "stop"], { stdio: "inherit" })
  }
}
