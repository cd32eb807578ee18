// `aml run examples/review.tsx` on a real coding agent, the way the README tells a user to
// configure one: AML_REVIEW_PROVIDER_MODULE=examples/review-opencode.ts, with OpenCode (the
// exact-pinned opencode-ai devDependency) as every reviewer and the synthesis. Offline: its
// model is a scripted Chat Completions server on 127.0.0.1 (support/review-model-server.ts)
// given to OpenCode through AML_OPENCODE_CONFIG. The review's file-reading Tools run in the
// CLI process and reach OpenCode over the MCP bridge; the scripted model only sees what
// those Tools returned.
import { join } from "node:path"

import { expect, it } from "vitest"

import { repoRoot, runCli } from "./support/cli.js"
import { exists } from "./support/processes.js"
import { startReviewModelServer } from "./support/review-model-server.js"
import { OPENCODE_OFFLINE_ENV, localOpencodeConfig } from "./support/opencode-local.js"

it("reviews examples/review-sample through OpenCode and prints the review", async () => {
  const server = await startReviewModelServer()
  try {
    const config = localOpencodeConfig(server.url)
    const result = await runCli(["run", "examples/review.tsx", "--trace"], {
      env: {
        AML_OPENCODE_CONFIG: JSON.stringify(config),
        AML_REVIEW_PROVIDER_MODULE: "examples/review-opencode.ts",
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        PATH: `${join(repoRoot, "node_modules/.bin")}:${process.env.PATH}`,
      },
      // Three OpenCode start-ups on a shared 2-core machine; a hang guard, not a bound.
      killAfterMs: 280_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      "Summary of the specialist reviews:\n" +
        "- src/math.js:3 divides without checking for a zero divisor\n" +
        "- src/format.js:2 prints $1.5 instead of $1.50 (no fixed two decimals)\n\n" +
        "Verdict: request changes (2 findings)\n",
    )

    // Three OpenCode sessions (two reviewers, then the synthesis), each process reaped.
    expect(result.stderr.match(/✓ agent Agent .*provider="opencode"/g)).toHaveLength(3)
    const pids = [...result.stderr.matchAll(/state="started" execution\.id="local-process:(\d+)"/g)].map((match) => Number(match[1]))
    expect(pids).toHaveLength(3)
    for (const pid of pids) expect(exists(pid)).toBe(false)

    // The findings came from the repository through the AML Tools: each reviewer listed the
    // files and read both, and the model saw their real text.
    const toolTexts = server.requests.flatMap((body) => (body.messages ?? []).filter((m: any) => m.role === "tool").map((m: any) => JSON.stringify(m.content)))
    expect(toolTexts.some((text) => text.includes("return a / b"))).toBe(true)
    expect(toolTexts.some((text) => text.includes("cents / 100"))).toBe(true)
    const calls = result.stderr.match(/✓ tool (list_files|read_file)/g) ?? []
    expect(calls.filter((call) => call.endsWith("list_files"))).toHaveLength(2)
    expect(calls.filter((call) => call.endsWith("read_file"))).toHaveLength(4)
  } finally {
    await server.close()
  }
}, 300_000)
