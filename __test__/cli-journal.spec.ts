// `aml run --journal <file>` (docs/CLI.md "Resuming with --journal"): a failed run leaves its
// settled steps in the file journal, and the same command run again resumes, calling the
// provider only for what had not settled, and says so on stderr.
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "vitest"

import { diagnostics, fixture, runCli } from "./support/cli.js"
import { tempDir } from "./support/processes.js"

const workflow = fixture("journaled.tsx")

describe("--journal", () => {
  it("fails, then the same command resumes from the journal and runs only the failed step", async () => {
    const dir = tempDir("aml-cli-journal-")
    try {
      const calls = join(dir.path, "calls.txt")
      const args = ["run", workflow, "--journal", "run.journal"]
      const first = await runCli(args, { cwd: dir.path, env: { AML_OUTAGE: "1", AML_CALLS_FILE: calls } })
      expect(first).toMatchObject({ code: 1, stdout: "" })
      const journal = join(dir.path, "run.journal")
      expect(diagnostics(first.stderr)).toBe(
        'aml: Agent "writer" (span-3) failed\n  caused by: 503 Service Unavailable\n' +
          `aml: journal ${journal} keeps 2 recorded steps; run the same command again to resume\n`,
      )
      expect(readFileSync(calls, "utf8")).toBe("Outline\nDraft\nReview\n")
      rmSync(calls)

      const second = await runCli(args, { cwd: dir.path, env: { AML_CALLS_FILE: calls } })
      expect(second).toMatchObject({ code: 0, stdout: "[Outline] [Draft] [Review]\n" })
      expect(second.stderr).toMatch(
        new RegExp(`^aml: resuming from journal ${journal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(2 recorded steps\\)\naml: starting run `),
      )
      // Only the step that had not settled reached the provider.
      expect(readFileSync(calls, "utf8")).toBe("Review\n")
    } finally {
      dir.remove()
    }
  })

  it("prints no resume line for a new journal, and --quiet drops it", async () => {
    const dir = tempDir("aml-cli-journal-")
    try {
      const fresh = await runCli(["run", workflow, "--journal", "run.journal"], { cwd: dir.path })
      expect(fresh).toMatchObject({ code: 0, stdout: "[Outline] [Draft] [Review]\n" })
      expect(fresh.stderr).not.toContain("resuming")
      const quiet = await runCli(["run", workflow, "--journal", "run.journal", "--quiet"], { cwd: dir.path })
      expect(quiet).toMatchObject({ code: 0, stdout: "[Outline] [Draft] [Review]\n", stderr: "" })
    } finally {
      dir.remove()
    }
  })

  it("refuses a journal recorded for another export, with the journal's message and a hint", async () => {
    const dir = tempDir("aml-cli-journal-")
    try {
      await runCli(["run", workflow, "--journal", "run.journal"], { cwd: dir.path })
      const other = await runCli(["run", workflow, "--journal", "run.journal", "-e", "other"], { cwd: dir.path })
      expect(other).toMatchObject({ code: 1, stdout: "" })
      const journal = join(dir.path, "run.journal")
      expect(other.stderr).toBe(
        `aml: AML journal "${journal}" belongs to workflow "${workflow}#default", not "${workflow}#other"\n` +
          "hint: this --journal file records another workflow or export: pass another file, or delete it to start over\n",
      )
    } finally {
      dir.remove()
    }
  })

  it("is listed in --help next to --quiet (with the studio's --from, --runs-dir, --no-record); the other options' lines are unchanged", async () => {
    const { stdout } = await runCli(["--help"])
    expect(stdout.slice(stdout.indexOf("Options:"))).toBe(
      "Options:\n" +
        "  -e, --entry <name>          Select a named export\n" +
        "  --runtime-env-file <file>   Apply an explicit env file last\n" +
        "  --trace                     Write metadata-only trace events to stderr\n" +
        "  --capture-content           Include sensitive content in trace output; implies --trace\n" +
        "  --json                      Write a JSON success envelope to stdout\n" +
        "  --journal <file>            Record the run in a file journal; rerunning resumes it\n" +
        "  --from <step>               With --journal: cut the journal before <step> and run again from there\n" +
        "  --agent <profile>[:<model>] Run Agents without a provider on a coding agent (opencode, codex, copilot, glm, pi)\n" +
        "  --runs-dir <dir>            Record runs under <dir> (default .aml/runs; AML_RUNS_DIR)\n" +
        "  --record                    Record the run for the studio, even with AML_RECORD=0 (the default)\n" +
        "  --no-record                 Do not record the run (also AML_RECORD=0)\n" +
        "  -q, --quiet                 Print only failures on stderr (no progress, no run lines)\n" +
        "  -h, --help                  Display this message\n" +
        "  -v, --version               Display version number\n",
    )
  })

  it("asks for the file", async () => {
    const result = await runCli(["run", workflow, "--journal"])
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: "aml: option `--journal <file>` value is missing\n" })
  })
})
