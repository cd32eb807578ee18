// recordRuns(runtime, options) (docs/STUDIO.md "What is recorded"): a run's record, the
// content policy, the size cap, and recording failures that never fail the evaluation.
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

import { afterEach, describe, expect, it, vi } from "vitest"

import { Agent, AmlRuntime, createMemoryJournal, evaluate, recordRuns } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

import { tempDir } from "./support/processes.js"

const provider = new DeterministicAgentProvider({ name: "echo", respond: (request) => ({ text: `answer to ${request.prompt}` }) })
const dirs: { remove: () => void }[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

function runsDir() {
  const dir = tempDir("aml-recorder-")
  dirs.push(dir)
  return join(dir.path, "runs")
}

/** Every record of run `id`: each line is one batch (a JSON array of records). */
function records(runs: string, id: string): unknown[][] {
  const lines = readFileSync(join(runs, id, "events.jsonl"), "utf8").trim().split("\n")
  return lines.flatMap((line) => JSON.parse(line))
}

/** The warnings the recorder emits, kept instead of printed (a green run reads green). */
function captureWarnings() {
  const spy = vi.spyOn(process, "emitWarning").mockImplementation(() => {})
  return { list: spy.mock.calls as unknown[][], restore: () => spy.mockRestore() }
}

const meta = (runs: string, id: string) => JSON.parse(readFileSync(join(runs, id, "run.json"), "utf8"))


describe("recordRuns", () => {
  it("records a run's metadata and trace, metadata only by default", async () => {
    const runs = runsDir()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stop = recordRuns(runtime, { dir: runs })
    let runId = ""
    runtime.on("start", (event) => void (runId = event.runId))
    expect(await runtime.evaluate(<Agent>secret prompt</Agent>)).toBe("answer to secret prompt")
    await stop()
    expect(readdirSync(runs)).toEqual([runId])
    expect(meta(runs, runId)).toMatchObject({ id: runId, status: "success", counts: { agent: 1, tool: 0, script: 0 }, content: false })
    const all = records(runs, runId)
    expect(all.map((record) => record.slice(0, 2))).toEqual([
      [0, "trace-0"],
      [0, "span-1"],
      [1, "span-1"],
      [1, "trace-0"],
    ])
    expect(JSON.stringify(all)).not.toContain("secret")
  })

  it("records prompts and answers only with captureContent", async () => {
    const runs = runsDir()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stop = recordRuns(runtime, { dir: runs, captureContent: true })
    await runtime.evaluate(<Agent>secret prompt</Agent>)
    await stop()
    const [id] = readdirSync(runs)
    expect(JSON.stringify(records(runs, id))).toContain('"prompt":"secret prompt"')
    expect(meta(runs, id).content).toBe(true)
  })

  it("stops at the size cap and says so", async () => {
    const runs = runsDir()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stop = recordRuns(runtime, { dir: runs, maxBytes: 64 })
    await runtime.evaluate(<Agent>a prompt</Agent>)
    await stop()
    const [id] = readdirSync(runs)
    expect(meta(runs, id)).toMatchObject({ status: "success", truncated: true })
  })

  it("a runs directory it cannot write never fails the evaluation", async () => {
    const runs = runsDir()
    writeFileSync(join(runs, "..", "blocker"), "")
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stop = recordRuns(runtime, { dir: join(runs, "..", "blocker", "runs") })
    const warnings = captureWarnings()
    try {
      expect(await runtime.evaluate(<Agent>a prompt</Agent>)).toBe("answer to a prompt")
      await stop()
    } finally {
      warnings.restore()
    }
    expect(warnings.list).toEqual([[expect.stringMatching(/^AML run .* is no longer recorded: /), { code: "AML_RUN_RECORDING" }]])
  })

  it("a run whose directory is removed mid-run keeps running, and says so once", async () => {
    const runs = runsDir()
    // The provider removes the run's directory once the recorder's writer has made it.
    const removing = {
      name: "removing",
      run: async () => {
        while (!existsSync(runs)) await new Promise((resolve) => setTimeout(resolve, 5))
        rmSync(runs, { recursive: true })
        return { text: "done" }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: removing })
    const stop = recordRuns(runtime, { dir: runs })
    const warnings = captureWarnings()
    try {
      expect(await runtime.evaluate(<Agent>a prompt</Agent>)).toBe("done")
      await stop()
    } finally {
      warnings.restore()
    }
    expect(warnings.list).toEqual([[expect.stringMatching(/^AML run .* is no longer recorded: /), { code: "AML_RUN_RECORDING" }]])
  })

  it("stops recording when asked", async () => {
    const runs = runsDir()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const stop = recordRuns(runtime, { dir: runs })
    await stop()
    await runtime.evaluate(<Agent>a prompt</Agent>)
    expect(() => readdirSync(runs)).toThrow()
  })

  it("records a run in progress to its end when stopped during it", async () => {
    const runs = runsDir()
    let stopped: Promise<void> | undefined
    const stopping = new DeterministicAgentProvider({
      name: "stopping",
      respond: () => {
        stopped = stop()
        return { text: "done" }
      },
    })
    const runtime = new AmlRuntime({ agentProvider: stopping })
    const stop = recordRuns(runtime, { dir: runs })
    await runtime.evaluate(<Agent>a prompt</Agent>)
    await runtime.evaluate(<Agent>not recorded</Agent>)
    await stopped
    expect(readdirSync(runs)).toHaveLength(1)
    const [id] = readdirSync(runs)
    expect(meta(runs, id)).toMatchObject({ status: "success", counts: { agent: 1 } })
    expect(records(runs, id).at(-1)?.slice(0, 2)).toEqual([1, "trace-0"])
  })

  it("keeps aml run's own journal: its one-call Agents' step points are the record's, made by its writer", async () => {
    const runs = runsDir()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    // What `aml run` hands over without --journal (lib/cli/run-record.js).
    const context = { meta: { workflow: "fan.tsx" }, journal: { journal, workflow: "fan.tsx#default", implicit: true } }
    const stop = recordRuns(runtime, { dir: runs, [Symbol.for("@aml-jsx/sdk/run-record-context")]: context } as any)
    const listened: any[] = []
    runtime.on("trace", (event) => void listened.push(event))
    let runId = ""
    runtime.on("start", (event) => void (runId = event.runId))
    function Fan() {
      return Promise.all(["a", "b", "c"].map((prompt) => evaluate(<Agent>{prompt}</Agent>))).then((parts) => parts.join(","))
    }
    expect(await runtime.evaluate(<Fan />, { journal })).toBe("answer to a,answer to b,answer to c")
    await stop()
    const entries = journal.entries()
    expect(entries.map((entry) => entry.value.text)).toEqual(["answer to a", "answer to b", "answer to c"])
    const all = records(runs, runId)
    const agentSpans = all.filter((record) => record[0] === 0 && record[3] === "agent").map((record) => record[1])
    const steps = all.filter((record) => record[0] === 2 && record[2] === "journal.step")
    expect(steps.map((record) => record[1])).toEqual(agentSpans)
    expect(steps.map((record) => record[4])).toEqual(entries.map((entry) => ({ key: entry.key, kind: "agent" })))
    // Each point comes after its span's end, where a reader files it under a span it has seen.
    for (const step of steps) expect(all.findIndex((record) => record[0] === 1 && record[1] === step[1])).toBeLessThan(all.indexOf(step))
    expect(listened.some((event) => event.name === "journal.step")).toBe(false)
    expect(readFileSync(join(runs, runId, "journal"), "utf8").trim().split("\n")).toHaveLength(4)
  })

  it("refuses what is not an AmlRuntime", () => {
    // @ts-expect-error -- not a runtime
    expect(() => recordRuns({ on: () => () => {} })).toThrow(new TypeError("recordRuns runtime must be an AmlRuntime"))
  })

  it("checks its options", () => {
    const runtime = new AmlRuntime({ agentProvider: provider })
    expect(() => recordRuns(runtime, { dir: "" })).toThrow(new TypeError("recordRuns dir must be a non-empty string"))
    expect(() => recordRuns(runtime, { maxBytes: 0 })).toThrow(new TypeError("recordRuns maxBytes must be a positive integer"))
    // @ts-expect-error -- not a boolean
    expect(() => recordRuns(runtime, { captureContent: "yes" })).toThrow(new TypeError("recordRuns captureContent must be a boolean"))
  })
})
