// AML Studio end to end (docs/STUDIO.md): `aml run` records, `aml studio` serves, and a real
// headless Chromium (Debian's chromium, driven by puppeteer-core, which never downloads a
// browser) reads the page: the run list, a run's tree and timeline, a failing run's error
// kind, a live run, "re-run from here", markup rendered as text; plus the server's 401/403.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"

import type { Browser, Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect } from "vitest"

import { repoRoot, runCli, startCli, type CliProcess } from "./support/cli.js"
import { exists, tempDir } from "./support/processes.js"
import { testNeeding } from "./support/test-groups.js"

const test = testNeeding("chromium")
const studioFixture = (name: string) => join(repoRoot, "__test__/fixtures/studio", name)
const review = join(repoRoot, "examples/review.tsx")
// Where the spec saves its screenshots; docs/STUDIO.md shows copies of them.
const shots = join(repoRoot, "target/studio-screenshots")

let dir: { path: string; remove: () => void }
let runs: string
let calls: string
let studio: CliProcess
let url: URL
let browser: Browser
let page: Page

const recordedEnv = () => ({ AML_RECORD: "1", AML_REVIEW_PROVIDER_MODULE: studioFixture("logging-provider.mjs"), AML_STUDIO_CALLS: calls })

async function listedRuns(): Promise<{ id: string; status: string; rerunOf?: string; error?: { kind: string } }[]> {
  const response = await fetch(new URL(`/api/runs?token=${url.searchParams.get("token")}`, url))
  return response.json()
}

/** Resolves with the first run `pick` accepts (polled; the spec's timeout is the guard). */
async function waitForRun(pick: (run: Awaited<ReturnType<typeof listedRuns>>[number]) => boolean) {
  for (;;) {
    const found = (await listedRuns()).find(pick)
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function rawGet(path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port: Number(url.port), path, headers: { host } }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    outgoing.on("error", reject)
    outgoing.end()
  })
}

async function openRun(id: string) {
  await page.goto(`${url.href}#run=${id}`)
  await page.waitForSelector(".node")
}

describe("AML Studio", () => {
  beforeAll(async () => {
    if (!existsSync("/usr/bin/chromium")) return
    dir = tempDir("aml-studio-")
    runs = join(dir.path, "runs")
    calls = join(dir.path, "calls.txt")
    // The studio's environment is its re-runs' (the logging provider and its call log).
    studio = startCli(["studio", "--port", "0", "--dir", runs], { cwd: dir.path, env: recordedEnv(), killAfterMs: 300_000 })
    let printed = ""
    studio.child.stdout!.on("data", (chunk: string) => (printed += chunk))
    await studio.waitForStderr("aml: studio serving")
    url = new URL(printed.trim())
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    if (studio !== undefined) {
      studio.child.kill("SIGTERM")
      await studio.done
    }
    dir?.remove()
  })

  test("serves the run list, a run's tree and timeline, and refuses requests without the token or with another Host", async () => {
    const done = await runCli(["run", review, "--runs-dir", runs], { cwd: dir.path, env: recordedEnv() })
    expect(done.code, done.stderr).toBe(0)
    expect(readFileSync(calls, "utf8").split("\n").filter(Boolean).sort()).toEqual(["reviewer:correctness", "reviewer:formatting", "synthesis"])
    const [run] = await listedRuns()
    expect(run.status).toBe("success")

    expect(await rawGet("/api/runs", `127.0.0.1:${url.port}`)).toBe(401)
    expect(await rawGet(`/?token=wrong`, `127.0.0.1:${url.port}`)).toBe(401)
    expect(await rawGet(`/api/runs?token=${url.searchParams.get("token")}`, `evil.example:${url.port}`)).toBe(403)
    expect(await rawGet(`/api/runs/..%2F..%2Fetc/events?token=${url.searchParams.get("token")}`, `127.0.0.1:${url.port}`)).toBe(404)

    const { default: puppeteer } = await import("puppeteer-core")
    browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] })
    page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 720 })
    await page.goto(url.href)
    await page.waitForSelector(`tr.run-row[data-run="${run.id}"]`)
    const row = await page.$eval(`tr.run-row[data-run="${run.id}"]`, (el) => ({ status: el.querySelector(".status")!.textContent, agents: el.querySelector(".count-agent")!.textContent }))
    expect(row).toEqual({ status: "success", agents: "3" })
    mkdirSync(shots, { recursive: true })

    await page.click(`tr.run-row[data-run="${run.id}"]`)
    await page.waitForSelector(".node")
    const counts = await page.evaluate(() => ({
      agents: document.querySelectorAll('.node[data-kind="agent"][data-name="Agent"]').length,
      bars: document.querySelectorAll(".node .bar").length,
      nodes: document.querySelectorAll(".node").length,
    }))
    expect(counts.agents).toBe(3)
    expect(counts.bars).toBe(counts.nodes)
    // Bars sit on one time axis: the root evaluation's spans (almost) all of it, and the
    // synthesis Agent's a visible share of it.
    const widths = await page.evaluate(() =>
      [...document.querySelectorAll(".node")].slice(0, 2).map((row) => row.querySelector(".bar")!.getBoundingClientRect().width / row.querySelector(".track")!.getBoundingClientRect().width),
    )
    expect(widths[0]).toBeGreaterThan(0.95)
    expect(widths[1]).toBeGreaterThan(0.05)
    // The tree collapses: the Parallel's toggle hides both reviewers' subtrees.
    await page.click('.node[data-kind="parallel"] .toggle')
    expect(await page.evaluate(() => document.querySelectorAll(".node").length)).toBe(4)
    await page.click('.node[data-kind="parallel"] .toggle')
    expect(await page.evaluate(() => document.querySelectorAll(".node").length)).toBe(counts.nodes)
    await page.click('.node[data-kind="agent"][data-name="Agent"]')
    await page.waitForSelector(".details .attributes")
    await page.screenshot({ path: join(shots, "run-tree.png") })
  }, 90_000)

  test("re-run from the synthesis Agent calls only that Agent again, linked to the old run", async () => {
    const [old] = await listedRuns()
    writeFileSync(calls, "")
    await openRun(old.id)
    // The synthesis Agent is the outermost Agent: the first Agent row of the tree.
    await page.click('.node[data-kind="agent"][data-name="Agent"]')
    await page.waitForSelector("button.rerun")
    await page.click("button.rerun")
    const rerun = await waitForRun((candidate) => candidate.rerunOf === old.id && candidate.status !== "running")
    expect(rerun.status).toBe("success")
    expect(readFileSync(calls, "utf8")).toBe("synthesis\n")
    // The re-run's process ends (the studio reaps it): nothing is left behind.
    await page.waitForFunction(() => /pid \d+/.test(document.querySelector(".rerun-status")?.textContent ?? ""))
    const pid = Number(/pid (\d+)/.exec(await page.$eval(".rerun-status", (el) => el.textContent ?? ""))![1])
    while (exists(pid)) await new Promise((resolve) => setTimeout(resolve, 20))
  }, 90_000)

  test("a failing run shows its error kind; its markup renders as text", async () => {
    const failed = await runCli(["run", studioFixture("failing.tsx"), "--runs-dir", runs, "--capture-content"], { cwd: dir.path, env: recordedEnv() })
    expect(failed.code).toBe(1)
    const run = await waitForRun((candidate) => candidate.status === "error")
    await page.goto(url.href)
    await page.waitForSelector(`tr.run-row[data-run="${run.id}"]`)
    const kind = await page.$eval(`tr.run-row[data-run="${run.id}"] .error-kind`, (el) => el.textContent)
    expect(kind).toBe(run.error!.kind)
    expect(kind).not.toBe("")
    await openRun(run.id)
    // By span id: a click re-renders the rows, so element handles would go stale.
    const agents = await page.$$eval('.node[data-kind="agent"][data-name="Agent"]', (rows) => rows.map((row) => `.node[data-span="${(row as HTMLElement).dataset.span}"]`))
    expect(agents).toHaveLength(2)
    // The failed Agent shows the run's failure as describeFailure() classified it.
    await page.click(agents[1])
    await page.waitForSelector(".details .error-kind")
    expect(await page.$eval(".details .error-kind", (el) => el.textContent)).toBe(run.error!.kind)
    // The first Agent's prompt (captured content) holds markup: it must show as text.
    await page.click(agents[0])
    await page.waitForFunction(() => document.querySelector(".details .attributes")?.textContent?.includes("Summarise"))
    const shown = await page.evaluate(() => ({
      attributes: document.querySelector(".details .attributes")!.textContent,
      images: document.querySelectorAll("img").length,
      title: document.title,
    }))
    expect(shown.attributes).toContain(`<img src=x onerror=\\"document.title='pwned'\\">`)
    expect(shown.images).toBe(0)
    expect(shown.title).toBe("AML Studio")
  }, 90_000)

  test("token usage per Agent (structured or ACP's legacy string) and summed per subtree", async () => {
    // A record written by hand in the recorder's format: one structured `usage` on an Agent
    // span's end, one Agent reporting through ACP's JSON-string `usage` on `agent.turn` events.
    const id = "usage-run"
    mkdirSync(join(runs, id))
    writeFileSync(join(runs, id, "run.json"), JSON.stringify({ id, status: "success", startedAt: Date.now(), durationMs: 10, counts: { agent: 2, tool: 0, script: 0 } }))
    const records = [
      [0, "trace-0", null, "evaluation", "evaluate", 0, {}],
      [0, "span-1", "trace-0", "agent", "Agent", 1, {}],
      [1, "span-1", "agent", false, 3, { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } }],
      [0, "span-2", "trace-0", "agent", "Agent", 2, {}],
      [2, "span-2", "agent.turn", 3, { usage: JSON.stringify({ inputTokens: 7, outputTokens: 2 }) }],
      [2, "span-2", "agent.turn", 4, { usage: JSON.stringify({ inputTokens: 1, outputTokens: 1 }) }],
      [1, "span-2", "agent", false, 4, {}],
      [1, "trace-0", "evaluation", false, 10, {}],
    ]
    // Two lines (two batches), as the recorder writes them.
    writeFileSync(join(runs, id, "events.jsonl"), `${JSON.stringify(records.slice(0, 3))}\n${JSON.stringify(records.slice(3))}\n`)
    await openRun(id)
    const usage = await page.$$eval(".node .usage", (cells) => cells.map((cell) => cell.textContent))
    expect(usage).toEqual(["18 in / 8 out tokens", "10 in / 5 out tokens", "8 in / 3 out tokens"])
  }, 90_000)

  test("a page open on a running run updates as its spans close", async () => {
    const gate = join(dir.path, "gate")
    const live = startCli(["run", studioFixture("gated.tsx"), "--runs-dir", runs], { cwd: dir.path, env: { ...recordedEnv(), AML_STUDIO_GATE: gate } })
    const run = await waitForRun((candidate) => candidate.status === "running")
    await openRun(run.id)
    // The gated Agent's bar is open while the run runs.
    await page.waitForFunction(() => document.querySelectorAll(".bar.open").length > 0 && document.querySelector(".summary .status")?.textContent === "running")
    writeFileSync(gate, "")
    expect((await live.done).code).toBe(0)
    await page.waitForFunction(() => document.querySelector(".summary .status")?.textContent === "success" && document.querySelectorAll(".bar.open").length === 0)
    const agents = await page.evaluate(() => document.querySelectorAll('.node[data-kind="agent"][data-name="Agent"]').length)
    expect(agents).toBe(2)

    // The list with every kind of run this spec made (docs/STUDIO.md shows it).
    await page.goto(url.href)
    await page.waitForFunction(() => document.querySelectorAll("tr.run-row").length === 5)
    await page.screenshot({ path: join(shots, "run-list.png") })
  }, 90_000)
})
