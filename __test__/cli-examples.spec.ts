// Every runnable example prints exactly its expected output through `aml run`
// (examples/expected/<name>.txt), with the lifecycle lines on stderr only.
import { readFileSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "vitest"

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
]

describe("examples run with aml run", () => {
  it.each(EXAMPLES)("examples/%s.tsx prints its expected output", async (name) => {
    const result = await runCli(["run", `examples/${name}.tsx`])
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
})
