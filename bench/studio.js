// AML Studio (issue 36, docs/STUDIO.md): what recording costs a 2,000-Agent fan-out, and how
// long a recorded 2,000-Agent run takes to open in the page (headless Chromium).
// Targets: recording ≤ 1.15× the run without it; the page shows the run within 2 s.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { Agent, AmlRuntime, createMemoryJournal, evaluate, recordRuns } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { runsList, studioStart, studioStop } from "../lib/core/native.js"

const FAN_OUT = 2_000
const ROUNDS = 15
const WARMUP = 3
const PAGE_ROUNDS = 7

const provider = { name: "bench", run: async (request) => ({ text: request.prompt }) }

function FanOut() {
  return Promise.all(Array.from({ length: FAN_OUT }, (_, i) => evaluate(jsx(Agent, { children: `task ${i}` })))).then((results) => results.length)
}

/**
 * Waits until the last run recorded by `runtime` under `runs` is complete on disk (its
 * run.json leaves "running": the writer replaces it last), as a reader of the files sees it.
 */
function settler(runtime, runs) {
  let last
  runtime.on("start", (event) => void (last = event.runId))
  return async () => {
    const file = join(runs, last, "run.json")
    for (;;) {
      try {
        if (JSON.parse(readFileSync(file, "utf8")).status !== "running") return
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function studioBenchmarks() {
  const dir = mkdtempSync(join(tmpdir(), "aml-studio-bench-"))
  try {
    const options = { agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0 }
    const plain = new AmlRuntime(options)
    // What any trace consumer costs (an OTel exporter, the console tracer): a record sink that
    // does nothing. Recording can be no cheaper than tracing itself.
    const traced = new AmlRuntime(options)
    const nothing = () => {}
    Object.defineProperty(nothing, Symbol.for("@aml-jsx/sdk/trace-record-sink"), { value: () => {} })
    traced.on("trace", nothing)
    const recorded = new AmlRuntime(options)
    recordRuns(recorded, { dir: join(dir, "runs") })
    const settleRecorded = settler(recorded, join(dir, "runs"))
    // What `aml run` records (lib/cli/run-record.js): events and metadata, plus a fresh
    // in-memory journal per run that is written into the run's directory when it finishes.
    const cli = new AmlRuntime(options)
    const context = { meta: { workflow: "bench.tsx", export: "default" }, journal: undefined }
    recordRuns(cli, { dir: join(dir, "cli-runs"), [Symbol.for("@aml-jsx/sdk/run-record-context")]: context })
    const settleCli = settler(cli, join(dir, "cli-runs"))
    const cliRun = () => {
      const journal = createMemoryJournal()
      context.journal = { journal, workflow: "bench.tsx#default", implicit: true }
      return cli.evaluate(jsx(FanOut, {}), { journal })
    }
    // The modes interleaved round by round in rotating order (a shared machine's load hits
    // them alike): no recording; recordRuns (events and metadata, an application's opt-in);
    // the same plus the journal `aml run` keeps (see above).
    const modes = [
      ["no recording", () => plain.evaluate(jsx(FanOut, {}))],
      ["an empty trace sink (tracing's own cost)", () => traced.evaluate(jsx(FanOut, {}))],
      ["recordRuns (events)", () => recorded.evaluate(jsx(FanOut, {}))],
      ["recordRuns + journal written (aml run)", cliRun],
      // The journal's own recording, unrecorded (docs/JOURNAL.md): what `aml run` keeps for
      // "re-run from here" costs this much before any record is written.
      ["an in-memory journal, no recording", () => plain.evaluate(jsx(FanOut, {}), { journal: createMemoryJournal() })],
    ]
    const samples = modes.map(() => [])
    // Timed: until evaluate() settles (the record is completed off the JS thread after it).
    // Then each round waits for the record to be complete on disk, so no writer's work
    // spills into the next mode's round.
    const settle = [undefined, undefined, settleRecorded, settleCli, undefined]
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (let k = 0; k < modes.length; k++) {
        const index = (round + k) % modes.length
        const started = performance.now()
        await modes[index][1]()
        const elapsed = performance.now() - started
        await settle[index]?.()
        if (round >= WARMUP) samples[index].push((elapsed * 1000) / FAN_OUT)
      }
    }
    const medians = samples.map(median)
    modes.forEach(([name], index) => console.log(`${`studio: 2,000-Agent fan-out, ${name}`.padEnd(72)} median ${medians[index].toFixed(2)} µs/Agent (${ROUNDS} interleaved rounds)`))
    console.log(`${"  empty trace sink / no recording".padEnd(72)} ${(medians[1] / medians[0]).toFixed(2)}×`)
    console.log(`${"  recordRuns / no recording".padEnd(72)} ${(medians[2] / medians[0]).toFixed(2)}× (target ≤ 1.15×)`)
    console.log(`${"  recordRuns + journal / no recording".padEnd(72)} ${(medians[3] / medians[0]).toFixed(2)}× (target ≤ 1.15×)`)
    console.log(`${"  in-memory journal alone / no recording".padEnd(72)} ${(medians[4] / medians[0]).toFixed(2)}×`)
    await pageOpen(join(dir, "runs"))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Opens the newest recorded run (a 2,000-Agent fan-out) in headless Chromium, PAGE_ROUNDS times. */
async function pageOpen(runs) {
  let puppeteer
  try {
    puppeteer = (await import("puppeteer-core")).default
  } catch {
    console.log("studio: page open skipped (puppeteer-core is not installed)")
    return
  }
  const [run] = JSON.parse(runsList(runs))
  const token = "bench"
  const port = await studioStart(runs, 0, token, "", [])
  const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] })
  try {
    const times = []
    for (let round = 0; round < PAGE_ROUNDS; round++) {
      const page = await browser.newPage()
      const started = performance.now()
      await page.goto(`http://127.0.0.1:${port}/?token=${token}#run=${run.id}`)
      await page.waitForFunction((count) => document.querySelectorAll('.node[data-name="Agent"]').length === count, { timeout: 60_000 }, FAN_OUT)
      times.push(performance.now() - started)
      await page.close()
    }
    console.log(`${"studio: a recorded 2,000-Agent run opens in the page".padEnd(72)} median ${median(times).toFixed(0)} ms (${PAGE_ROUNDS} rounds, navigation to every Agent row rendered; target ≤ 2,000 ms)`)
  } finally {
    await browser.close()
    studioStop(port)
  }
}
