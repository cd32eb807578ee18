// Every runnable example prints exactly its expected output through `aml run`
// (examples/expected/<name>.txt), with the lifecycle lines on stderr only.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"

import { fixture, repoRoot, runCli } from "./support/cli.js"

const EXAMPLES = [
  "basic",
  "concurrency",
  "structured",
  "context",
  "follow-up",
  "tools",
  "skill",
  "mcp",
  "parallel",
  "loop",
  "script",
  "review",
  "resume",
  "workspace-local",
  "workspace-persistence",
  "observe-agent",
]

// The Workspace examples keep their directories where AML_WORKSPACE_DIR / AML_WORKSPACE_STORE
// say; every run here gets fresh ones (other checkouts may run the same examples at once).
const scratch = mkdtempSync(join(tmpdir(), "aml-cli-examples-"))
afterAll(() => rmSync(scratch, { force: true, recursive: true }))
let fresh = 0
function workspaceEnv() {
  fresh += 1
  return { AML_WORKSPACE_DIR: join(scratch, `dir-${fresh}`), AML_WORKSPACE_STORE: join(scratch, `store-${fresh}`) }
}

describe("examples run with aml run", () => {
  it.each(EXAMPLES)("examples/%s.tsx prints its expected output", async (name) => {
    const result = await runCli(["run", `examples/${name}.tsx`], { env: workspaceEnv() })
    const expected = readFileSync(join(repoRoot, "examples/expected", `${name}.txt`), "utf8")
    expect(result.stderr).toMatch(new RegExp(`^aml: starting run [0-9a-f-]{36} for ${join(repoRoot, "examples", `${name}.tsx`)}\n`))
    expect(result.stderr).toMatch(/aml: finished run [0-9a-f-]{36} \(ok\) in \d+(\.\d)?ms\n$/)
    expect(result.stdout).toBe(expected)
    expect(result.code).toBe(0)
  })

  it("the review reports every seeded problem with its line and a verdict", async () => {
    const { stdout } = await runCli(["run", "examples/review.tsx"])
    expect(stdout).toContain("- src/math.js:3 divide() returns Infinity or NaN when b is 0")
    expect(stdout).toContain('- src/format.js:2 formatPrice(150) prints "$1.5"')
    expect(stdout.trimEnd().endsWith("Verdict: request changes (3 findings)")).toBe(true)
  })

  it("the review uses the provider module named by AML_REVIEW_PROVIDER_MODULE", async () => {
    const result = await runCli(["run", "examples/review.tsx"], { env: { AML_REVIEW_PROVIDER_MODULE: fixture("review-provider.ts") } })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      "<Merge the specialists' findings and end with a verdict line; tools=; Review of review-sample:\n\n" +
        "<Focus: correctness; tools=list_files,read_file; Review every source file of the repository for correctness problems.>" +
        "<Focus: formatting; tools=list_files,read_file; Review every source file of the repository for formatting problems.>>\n",
    )
  })

  it("workspace-local leaves the File in the Workspace directory and releases its lock", async () => {
    const env = workspaceEnv()
    const result = await runCli(["run", "examples/workspace-local.tsx"], { env })
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(join(env.AML_WORKSPACE_DIR, "reports/summary.md"), "utf8")).toBe("Generated before the Sandbox runs.")
    expect(readdirSync(scratch).filter((entry) => entry.includes(".lock"))).toEqual([])
  })

  it("workspace-persistence: each run restores the revision the previous run saved", async () => {
    const env = workspaceEnv()
    const runs = []
    for (let run = 0; run < 3; run++) runs.push(await runCli(["run", "examples/workspace-persistence.tsx"], { env }))
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    expect(runs.map((run) => run.stdout)).toEqual([
      "run 1 (runs restored from the last revision: 0)\nrun 1\n\n",
      "run 2 (runs restored from the last revision: 1)\nrun 1\nrun 2\n\n",
      "run 3 (runs restored from the last revision: 2)\nrun 1\nrun 2\nrun 3\n\n",
    ])
    // Each run published a revision; `retention: 3` keeps exactly the last three.
    const revisions = join(env.AML_WORKSPACE_STORE, "notes", "revisions")
    expect(readdirSync(revisions).filter((name) => name.endsWith(".tar.gz"))).toHaveLength(3)
  })

  it("observe-agent --trace --capture-content: the turns in authored order, the Tool inside the first, cleanup last", async () => {
    const result = await runCli(["run", "examples/observe-agent.tsx", "--trace", "--capture-content"])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(readFileSync(join(repoRoot, "examples/expected/observe-agent.txt"), "utf8"))
    const feed = result.stderr
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^[▶✓•] (agent\.|tool )/.test(line))
      .map((line) => line.replace(/ \d+(\.\d+)?ms.*$/, "").replace(/ prompt=.*$/, "").replace(/ input=.*$/, ""))
    expect(feed).toEqual([
      '▶ agent.session provider="scripted-analyst"',
      '▶ agent.turn index=1 kind="initial"',
      "▶ tool read_incident_packet",
      "✓ tool read_incident_packet",
      "✓ agent.turn",
      '▶ agent.turn index=2 kind="follow-up"',
      "✓ agent.turn",
      '▶ agent.turn index=3 kind="follow-up"',
      "✓ agent.turn",
      "▶ agent.cleanup",
      "✓ agent.cleanup",
      "✓ agent.session",
    ])
    // Content capture is on: the Tool's output is in the feed.
    expect(result.stderr).toContain('output="{\\"deployedAt\\":\\"2026-11-30T14:02Z\\"')
  })
})
