// The studio's command-line side without a browser (docs/CLI.md, docs/STUDIO.md): `aml run`
// records a run with its journal, `--from` cuts a journal before a step and runs only from
// there, its usage errors, and `aml runs prune`.
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "vitest"

import { fixture, runCli } from "./support/cli.js"
import { tempDir } from "./support/processes.js"

const workflow = fixture("journaled.tsx")
const meta = (runs: string, id: string) => JSON.parse(readFileSync(join(runs, id, "run.json"), "utf8"))

describe("recording and --from", () => {
  it("records a run with its journal, and --from re-runs only the cut step and what followed", async () => {
    const dir = tempDir("aml-cli-studio-")
    try {
      const calls = join(dir.path, "calls.txt")
      const env = { AML_RECORD: "1", AML_CALLS_FILE: calls }
      const first = await runCli(["run", workflow], { cwd: dir.path, env })
      expect(first.code, first.stderr).toBe(0)
      const runs = join(dir.path, ".aml/runs")
      const [id] = readdirSync(runs)
      expect(meta(runs, id)).toMatchObject({ id, status: "success", counts: { agent: 3 }, workflow, export: "default", journal: true })
      expect(first.stderr).toContain(`aml: starting run ${id} `)
      const records = readFileSync(join(runs, id, "journal"), "utf8").trim().split("\n").slice(1).map((line) => JSON.parse(line))
      expect(records).toHaveLength(3)
      // Every live Agent named its journal key in the recorded trace.
      const events = readFileSync(join(runs, id, "events.jsonl"), "utf8")
      expect(events.match(/"journal\.step"/g)).toHaveLength(3)
      for (const record of records) expect(events).toContain(JSON.stringify({ key: record.key, kind: "agent" }))

      // Re-run from the second step (Draft): Outline replays, Draft and Review run again.
      const copy = join(dir.path, "copy.journal")
      copyFileSync(join(runs, id, "journal"), copy)
      rmSync(calls)
      const again = await runCli(["run", workflow, "--journal", copy, "--from", records[1].key, "--rerun-of", id], { cwd: dir.path, env })
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr).toContain(`aml: journal ${copy} cut before step ${records[1].key} (1 recorded step kept, 2 to run again)\n`)
      expect(readFileSync(calls, "utf8")).toBe("Draft\nReview\n")
      const rerun = readdirSync(runs).find((candidate) => candidate !== id)!
      expect(meta(runs, rerun)).toMatchObject({ rerunOf: id, from: records[1].key, status: "success" })
    } finally {
      dir.remove()
    }
  })

  it("a live Tool call names its step too, and --from re-runs from it", async () => {
    const dir = tempDir("aml-cli-studio-")
    try {
      const calls = join(dir.path, "calls.txt")
      const env = { AML_RECORD: "1", AML_CALLS_FILE: calls }
      const toolWorkflow = fixture("journaled-tool.tsx")
      const first = await runCli(["run", toolWorkflow], { cwd: dir.path, env })
      expect(first.code, first.stderr).toBe(0)
      expect(readFileSync(calls, "utf8")).toBe("Plan\nlookup abc\nAnswer\n")
      const runs = join(dir.path, ".aml/runs")
      const [id] = readdirSync(runs)
      const records = readFileSync(join(runs, id, "journal"), "utf8").trim().split("\n").slice(1).map((line) => JSON.parse(line))
      expect(records.map((record) => record.kind)).toEqual(["agent", "tool", "agent"])
      // The Tool's own span carries its key, as each Agent's does.
      const trace = readFileSync(join(runs, id, "events.jsonl"), "utf8").trim().split("\n").flatMap((line) => JSON.parse(line))
      const toolSpan = trace.find((record: any[]) => record[0] === 0 && record[3] === "tool")[1]
      const step = trace.find((record: any[]) => record[0] === 2 && record[2] === "journal.step" && record[1] === toolSpan)
      expect(step[4]).toEqual({ key: records[1].key, kind: "tool" })

      const copy = join(dir.path, "copy.journal")
      copyFileSync(join(runs, id, "journal"), copy)
      rmSync(calls)
      const again = await runCli(["run", toolWorkflow, "--journal", copy, "--from", records[1].key], { cwd: dir.path, env })
      expect(again.code, again.stderr).toBe(0)
      expect(readFileSync(calls, "utf8")).toBe("lookup abc\nAnswer\n")
    } finally {
      dir.remove()
    }
  })

  it("--trace shows a recorded run as an unrecorded one: the recorder's journal steps are its own", async () => {
    const dir = tempDir("aml-cli-studio-")
    try {
      const env = { AML_RECORD: "", AML_CALLS_FILE: join(dir.path, "calls.txt") }
      const recorded = await runCli(["run", workflow, "--trace"], { cwd: dir.path, env })
      const plain = await runCli(["run", workflow, "--trace", "--no-record"], { cwd: dir.path, env })
      expect(recorded.code, recorded.stderr).toBe(0)
      const names = (stderr: string) => stderr.split("\n").filter((line) => line.includes("journal.")).length
      expect(names(plain.stderr)).toBe(0)
      expect(names(recorded.stderr)).toBe(0)
      const runs = join(dir.path, ".aml/runs")
      const [id] = readdirSync(runs)
      expect(readFileSync(join(runs, id, "events.jsonl"), "utf8").match(/"journal\.step"/g)).toHaveLength(3)
      // With the user's own --journal, the steps are the user's trace events (docs/JOURNAL.md).
      const journaled = await runCli(["run", workflow, "--trace", "--journal", join(dir.path, "own.journal")], { cwd: dir.path, env })
      expect(names(journaled.stderr)).toBe(3)
    } finally {
      dir.remove()
    }
  })

  it("records by default; not with --no-record or AML_RECORD=0, and --record overrides AML_RECORD=0", async () => {
    const dir = tempDir("aml-cli-studio-")
    const runs = join(dir.path, ".aml/runs")
    const count = () => (existsSync(runs) ? readdirSync(runs).length : 0)
    try {
      expect((await runCli(["run", workflow, "--no-record"], { cwd: dir.path, env: { AML_RECORD: "" } })).code).toBe(0)
      expect((await runCli(["run", workflow], { cwd: dir.path, env: { AML_RECORD: "0" } })).code).toBe(0)
      expect(existsSync(join(dir.path, ".aml"))).toBe(false)
      expect((await runCli(["run", workflow], { cwd: dir.path, env: { AML_RECORD: "" } })).code).toBe(0)
      expect(count()).toBe(1)
      expect((await runCli(["run", workflow, "--record"], { cwd: dir.path, env: { AML_RECORD: "0" } })).code).toBe(0)
      expect(count()).toBe(2)
    } finally {
      dir.remove()
    }
  })

  it("refuses --from without --journal, and an unknown step without changing the journal", async () => {
    const dir = tempDir("aml-cli-studio-")
    try {
      const alone = await runCli(["run", workflow, "--from", "agent:A."], { cwd: dir.path })
      expect(alone).toMatchObject({ code: 1, stdout: "", stderr: "aml: option `--from <step>` needs `--journal <file>`\n" })
      await runCli(["run", workflow, "--journal", "run.journal"], { cwd: dir.path })
      const before = readFileSync(join(dir.path, "run.journal"), "utf8")
      const unknown = await runCli(["run", workflow, "--journal", "run.journal", "--from", "agent:nowhere"], { cwd: dir.path })
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toContain(`AML journal "${join(dir.path, "run.journal")}" has no step "agent:nowhere"`)
      expect(readFileSync(join(dir.path, "run.journal"), "utf8")).toBe(before)
    } finally {
      dir.remove()
    }
  })
})

describe("aml runs prune", () => {
  it("keeps the newest runs", async () => {
    const dir = tempDir("aml-cli-studio-")
    try {
      const env = { AML_RECORD: "1" }
      for (let i = 0; i < 3; i++) expect((await runCli(["run", workflow], { cwd: dir.path, env })).code).toBe(0)
      const runs = join(dir.path, ".aml/runs")
      const newest = readdirSync(runs).map((id) => meta(runs, id)).sort((a, b) => b.startedAt - a.startedAt)[0].id
      const pruned = await runCli(["runs", "prune", "--keep", "1"], { cwd: dir.path })
      expect(pruned).toMatchObject({ code: 0, stdout: `aml: removed 2 runs from ${runs}\n` })
      expect(readdirSync(runs)).toEqual([newest])
      const bad = await runCli(["runs", "prune", "--keep", "x"], { cwd: dir.path })
      expect(bad).toMatchObject({ code: 1, stderr: "aml: option `--keep <count>` must be a whole number\n" })
    } finally {
      dir.remove()
    }
  })
})
