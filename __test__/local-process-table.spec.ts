// The native process table, counted from an empty start: in its own file (its own process,
// vitest pool forks), so handles of other tests still being released cannot shift the count.

import { expect, test } from "vitest"

import { spawnLocalProcess } from "@aml-jsx/sdk"
import { liveProcesses } from "../lib/core/native.js"
import { until } from "./support/async.js"

test("a finished process whose output was read leaves the process table", async () => {
  expect(liveProcesses()).toBe(0)
  const child = await spawnLocalProcess("sh", ["-c", "echo out; echo err >&2"], {
    cwd: process.cwd(),
    signal: new AbortController().signal,
  })
  expect(liveProcesses()).toBe(1)
  await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.wait()])
  await until(() => liveProcesses() === 0, "the handle to be released")
})
