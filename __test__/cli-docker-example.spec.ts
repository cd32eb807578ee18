// examples/docker.tsx through `aml run` against the real Docker daemon (started by
// scripts/docker-daemon.sh, as for the Docker Sandbox specs) with the local busybox test
// image: its expected output, and no container left behind.
import { readFileSync } from "node:fs"
import { join } from "node:path"

import { beforeAll, expect, it } from "vitest"

import { repoRoot, runCli } from "./support/cli.js"
import { amlContainers, startDockerDaemon, TEST_IMAGE } from "./support/docker.js"

beforeAll(() => startDockerDaemon(), 600_000)

it("examples/docker.tsx prints its expected output and removes its container", async () => {
  const before = amlContainers()
  const result = await runCli(["run", "examples/docker.tsx"], { env: { AML_DOCKER_IMAGE: TEST_IMAGE } })
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout).toBe(readFileSync(join(repoRoot, "examples/expected/docker.txt"), "utf8"))
  expect(amlContainers()).toEqual(before)
}, 120_000)
