// `aml run` with token usage (issue 37, docs/CLI.md "Output"): the finish line carries the
// totals and `--json` adds them after `result`.
import { afterAll, describe, expect, it } from "vitest"

import { fixture, removeTempProjects, runCli } from "./support/cli.js"

afterAll(removeTempProjects)

describe("aml run with reported usage", () => {
  it("prints the totals on the finish line", async () => {
    const result = await runCli(["run", fixture("usage.tsx")])
    expect(result).toMatchObject({ code: 0, stdout: "onetwo\n" })
    expect(result.stderr).toMatch(/aml: finished run \S+ \(ok\) in \d+(\.\d)?ms — tokens: 12 input, 30 output, 42 total\n$/)
  })

  it("--json includes them as usage", async () => {
    const result = await runCli(["run", fixture("usage.tsx"), "--json"])
    expect(result.code).toBe(0)
    const envelope = JSON.parse(result.stdout)
    expect(Object.keys(envelope)).toEqual(["runId", "durationMs", "success", "result", "usage"])
    expect(envelope.usage).toEqual({ inputTokens: 12, outputTokens: 30, totalTokens: 42 })
  })
})
