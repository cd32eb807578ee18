// examples/durable/main.ts as a user runs it (Node 22): a local Restate server, the worker,
// one submitted review; it prints the result and leaves no process or directory behind.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"

import { expect } from "vitest"

import { node22 } from "./support/restate.js"
import { testNeeding } from "./support/test-groups.js"

// Needs Node 22 (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("node22")

it("examples/durable/main.ts runs the review durably against a local server", () => {
  const before = readdirSync(tmpdir()).filter((name) => name.startsWith("aml-durable-example-"))
  const main = fileURLToPath(new URL("../examples/durable/main.ts", import.meta.url))
  const run = spawnSync(node22, [main], { encoding: "utf8", timeout: 120_000 })
  expect(run.status, run.stderr).toBe(0)
  expect(run.stdout.trim()).toBe("[Critique and finish: [Draft the review f]")
  expect(readdirSync(tmpdir()).filter((name) => name.startsWith("aml-durable-example-"))).toEqual(before)
  const left = spawnSync("pgrep", ["-f", "examples/durable/worker.ts"], { encoding: "utf8" })
  expect(left.stdout.trim()).toBe("")
}, 150_000)
