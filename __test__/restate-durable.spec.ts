// AML workflows on Restate (docs/DURABLE.md, issue 23), against a real restate-server on
// 127.0.0.1 and workers on Node 22 behind one loopback proxy. A worker SIGKILLs itself at a
// chosen point (fixtures/restate/worker.mjs, KILL); Restate retries on the other worker, which
// replays what the journal object holds. Provider calls are logged to a file outside the workers.
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect } from "vitest"

import { startMoto, type Moto } from "./support/moto.js"
import { startRecorder, type Recorded, type Recorder } from "./support/restate-recorder.js"
import { livePorts, startProxy, startRestate, startWorker, workerSecret, type Proxy, type RestateServer, type Worker } from "./support/restate.js"
import { testNeeding } from "./support/test-groups.js"

// Needs the moto S3 server and Node 22 (scripts/test-groups.js): skipped, and named so, where this machine lacks them.
const it = testNeeding("moto", "node22")

const script = fileURLToPath(new URL("./fixtures/restate/worker.mjs", import.meta.url))
const callLog = join(tmpdir(), `aml-restate-calls-${process.pid}.jsonl`)

interface Call {
  pid: number
  event: string
  prompt?: string
  workflow?: string
  key?: string
  /** A record's attempt token (the x-aml-journal-attempt header). */
  attempt?: string
}

let server: RestateServer
let moto: Moto
let proxy: Proxy
/** The workers the proxy forwards to, first alive first. */
let workers: Worker[] = []
let ids = 0
/** The workers' way to the ingress: forwards everything, and logs each stored journal record. */
let recorder: Recorder
let recorderUrl: string

function calls(): Call[] {
  let text = ""
  try {
    text = readFileSync(callLog, "utf8")
  } catch {
    return []
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Call)
}

/** Replaces the workers with a first one (`kill`: its KILL rule) and a healthy second one. */
async function workerPair(kill: string, env: Record<string, string> = {}, secondEnv: Record<string, string> = env) {
  await Promise.all(workers.map((worker) => worker.stop()))
  const base = { CALL_LOG: callLog, INGRESS: recorderUrl, RESTATE_LOGGING: "ERROR" }
  workers = [await startWorker(script, { ...base, ...env, KILL: kill }), await startWorker(script, { ...base, ...secondEnv })]
}

/** Starts workflow `name` under a fresh id and waits for its outcome over the ingress. */
async function runWorkflow(name: string, input: unknown = {}, id = `wf-${process.pid}-${++ids}`) {
  const submitted = await fetch(`${server.ingress}/${name}/${id}/run/send`, {
    body: JSON.stringify(input),
    headers: { "content-type": "application/json" },
    method: "POST",
  })
  const receipt = (await submitted.json()) as { invocationId: string; status: string }
  const output = await fetch(`${server.ingress}/restate/workflow/${name}/${id}/attach`)
  return { id, receipt, status: output.status, body: await output.text() }
}

function prompts(log: Call[], event: string) {
  return log.filter((call) => call.event === event).map((call) => call.prompt)
}

function count(list: (string | undefined)[], value: string) {
  return list.filter((item) => item === value).length
}

/**
 * A step is settled once its journal record is durable: Restate answered the worker's
 * `record` call. The recorder sits between the workers and the ingress and logs each answered
 * record (`recorded`, the Agent's text, the sending worker's pid) before passing the answer on,
 * so a record the worker saw answered is always in the log, even if the worker dies next.
 */
function logRecorded(recorded: Recorded) {
  const prompt = recorded.text?.replace(/ ok$/, "")
  appendFileSync(callLog, `${JSON.stringify({ pid: recorded.pid, event: "recorded", prompt, attempt: recorded.attempt })}\n`)
}

beforeAll(async () => {
  writeFileSync(callLog, "")
  moto = await startMoto()
  // Short server defaults, so the long-step case shows what amlWorkflow's own timeouts change.
  server = await startRestate({ RESTATE_WORKER__INVOKER__ABORT_TIMEOUT: "1s", RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT: "1s" })
  recorder = await startRecorder(server.ingress, workerSecret, logRecorded)
  recorderUrl = recorder.url
  proxy = await startProxy(() => livePorts(workers))
  await workerPair("")
  await server.register(proxy.uri)
}, 180_000)

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()))
  await proxy?.stop()
  await recorder?.close()
  await server?.stop()
  await moto?.stop()
  rmSync(callLog, { force: true })
  // Nothing is left behind: no worker or server process, no data directory.
  for (const pid of [...workers.map((worker) => worker.child.pid), server?.pid]) {
    expect(() => process.kill(pid!, 0), `pid ${pid}`).toThrow()
  }
  expect(existsSync(server.dataDir)).toBe(false)
}, 60_000)

describe("a worker dies between steps", () => {
  it("six sequential Agents: Restate retries on the other worker, Agents 1-3 ran once", async () => {
    await workerPair("")
    const clean = await runWorkflow("Chain")
    expect(clean.status).toBe(200)
    writeFileSync(callLog, "")
    await workerPair("before:step 4")
    const killed = await runWorkflow("Chain")
    expect(killed.status).toBe(200)
    expect(killed.body).toBe(clean.body)
    const log = calls()
    const [first] = workers
    expect(first!.child.signalCode).toBe("SIGKILL")
    const started = prompts(log, "start")
    for (let i = 1; i <= 6; i++) expect(count(started, `step ${i}`), `step ${i}`).toBe(1)
    // Steps 1-3 on the killed worker, 4-6 on the second.
    expect(log.filter((call) => call.event === "start" && call.pid === first!.child.pid).map((call) => call.prompt)).toEqual(["step 1", "step 2", "step 3"])
    expect(log.filter((call) => call.event === "attempt").length).toBe(2)
  }, 120_000)
})

/** The call log of one run: cleared, then `run`, then read. */
async function logged<T>(run: () => Promise<T>): Promise<[T, Call[]]> {
  writeFileSync(callLog, "")
  const result = await run()
  return [result, calls()]
}

function startedOn(log: Call[], pid: number | undefined) {
  return log.filter((call) => call.event === "start" && call.pid === pid).map((call) => call.prompt)
}

describe("a worker dies under concurrency", () => {
  it("a <Parallel> of 8 Agents under maxConcurrentAgents 3: no settled branch runs twice", async () => {
    await workerPair("")
    const clean = await runWorkflow("Fan")
    expect(clean.status).toBe(200)
    // Killed as the fifth provider call starts. A queued Agent starts only once the record
    // of an earlier one is durable, so two branches had settled (recorded) by then. A branch
    // whose provider answered but whose record was still in flight may run again: that is
    // the interrupted step's at-least-once (docs/DURABLE.md), not a settled one.
    await workerPair("start:5")
    const [killed, log] = await logged(() => runWorkflow("Fan"))
    expect(killed.status).toBe(200)
    expect(killed.body).toBe(clean.body)
    const first = workers[0]!.child.pid
    expect(workers[0]!.child.signalCode).toBe("SIGKILL")
    // Settled before the retry: recorded (Restate answered) before the second worker's attempt
    // began, and so before it loaded the journal. A record still in flight when the worker
    // died may land after that load; its branch runs again, as an interrupted step may.
    const retry = log.findIndex((call) => call.event === "attempt" && call.pid === workers[1]!.child.pid)
    expect(retry).toBeGreaterThan(0)
    const settledFirst = log.slice(0, retry).filter((call) => call.event === "recorded" && call.pid === first).map((call) => call.prompt)
    expect(settledFirst.length, JSON.stringify(log)).toBeGreaterThanOrEqual(2)
    for (const prompt of settledFirst) expect(prompt).toMatch(/^branch [1-8]$/)
    const second = startedOn(log, workers[1]!.child.pid)
    for (const prompt of settledFirst) expect(second, `${prompt} settled before the kill`).not.toContain(prompt)
    // The attempt fence: a record in flight when the worker died is stored only if it landed
    // before the retry's load (which then replays it); after, it is refused. So the object
    // keeps each branch exactly once, whichever way that race went.
    const recorded = prompts(log, "recorded")
    for (let i = 1; i <= 8; i++) expect(count(recorded, `branch ${i}`), `branch ${i}`).toBe(1)
    // Each attempt sent its own token with its records.
    const tokens = (pid: number | undefined) => [...new Set(log.filter((call) => call.event === "recorded" && call.pid === pid).map((call) => call.attempt))]
    const [firstTokens, secondTokens] = [tokens(first), tokens(workers[1]!.child.pid)]
    expect(firstTokens).toHaveLength(1)
    expect(secondTokens).toHaveLength(1)
    expect(firstTokens[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(secondTokens[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(secondTokens[0]).not.toBe(firstTokens[0])
  }, 120_000)

  it("a worker killed during an Agent call: that Agent runs again, nothing else does", async () => {
    await workerPair("during:step 2")
    const [killed, log] = await logged(() => runWorkflow("Chain"))
    expect(killed.status).toBe(200)
    expect(JSON.parse(killed.body)).toBe("step 1 ok|step 2 ok|step 3 ok|step 4 ok|step 5 ok|step 6 ok")
    const started = prompts(log, "start")
    expect(count(started, "step 1")).toBe(1)
    expect(count(started, "step 2")).toBe(2)
    for (let i = 3; i <= 6; i++) expect(count(started, `step ${i}`)).toBe(1)
    expect(startedOn(log, workers[0]!.child.pid)).toEqual(["step 1", "step 2"])
  }, 120_000)
})

describe("Workspaces across workers", () => {
  it("an s3Workspace saved by the dead worker is restored by the second, which finishes", async () => {
    const bucket = await moto.bucket()
    await workerPair("before:review")
    const id = `saved-${process.pid}-${++ids}`
    const [done, log] = await logged(() => runWorkflow("Saved", { bucket, endpoint: moto.endpoint, id }))
    expect(done.status, done.body).toBe(200)
    const first = workers[0]!.child.pid
    expect(workers[0]!.child.signalCode).toBe("SIGKILL")
    // The draft was written once, by the first worker, and the second reviewed that revision.
    expect(JSON.parse(done.body)).toBe(`review draft ok by ${first} ok`)
    expect(count(prompts(log, "start"), "draft")).toBe(1)
    expect(startedOn(log, workers[1]!.child.pid)).toEqual([`review draft ok by ${first}`])
  }, 120_000)
})

describe("submission, failures, changed code, cancellation", () => {
  it("submitting the same workflow id twice runs it once", async () => {
    await workerPair("")
    const id = `twice-${process.pid}-${++ids}`
    const [[first, second], log] = await logged(async () => [await runWorkflow("Chain", {}, id), await runWorkflow("Chain", {}, id)])
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(second.body).toBe(first.body)
    expect(first.receipt.status).toBe("Accepted")
    expect(second.receipt.status).toBe("PreviouslyAccepted")
    expect(log.filter((call) => call.event === "attempt").length).toBe(1)
    for (let i = 1; i <= 6; i++) expect(count(prompts(log, "start"), `step ${i}`)).toBe(1)
  }, 120_000)

  it("a non-retryable failure ends the invocation without retries", async () => {
    await workerPair("")
    const [failed, log] = await logged(() => runWorkflow("Broken"))
    expect(failed.status).toBeGreaterThanOrEqual(400)
    expect(failed.body).toContain("Agent span-1 has no provider")
    expect(log.filter((call) => call.event === "attempt").length).toBe(1)
  }, 120_000)

  it("a changed prompt under a running invocation re-runs that step; the others replay", async () => {
    await workerPair("before:third", { PROMPT_VERSION: "1" }, { PROMPT_VERSION: "2" })
    const [done, log] = await logged(() => runWorkflow("Changed"))
    expect(done.status).toBe(200)
    expect(JSON.parse(done.body)).toBe("first ok|second v2 ok|third ok")
    const started = prompts(log, "start")
    expect(count(started, "first")).toBe(1)
    expect(count(started, "second v1")).toBe(1)
    expect(count(started, "second v2")).toBe(1)
    expect(startedOn(log, workers[1]!.child.pid)).toEqual(["second v2", "third"])
  }, 120_000)

  it("cancelling the invocation aborts the evaluation's signal", async () => {
    await workerPair("")
    writeFileSync(callLog, "")
    const id = `cancel-${process.pid}-${++ids}`
    const submitted = await fetch(`${server.ingress}/Slow/${id}/run/send`, { body: "{}", headers: { "content-type": "application/json" }, method: "POST" })
    const { invocationId } = (await submitted.json()) as { invocationId: string }
    while (!calls().some((call) => call.event === "start" && call.prompt === "slow")) await new Promise((resolve) => setTimeout(resolve, 20))
    await server.cancel(invocationId)
    const output = await fetch(`${server.ingress}/restate/workflow/Slow/${id}/attach`)
    expect(output.status).toBe(409)
    expect(calls().filter((call) => call.event === "aborted").map((call) => call.prompt)).toEqual(["slow"])
    expect(calls().filter((call) => call.event === "attempt").length).toBe(1)
  }, 120_000)
})

describe("long steps", () => {
  it("an Agent call longer than the server's inactivity and abort timeouts completes under amlWorkflow's defaults", async () => {
    await workerPair("")
    const [done, log] = await logged(() => runWorkflow("Long"))
    expect(done.status, done.body).toBe(200)
    expect(JSON.parse(done.body)).toBe("slow ok")
    expect(log.filter((call) => call.event === "attempt").length).toBe(1)
    expect(prompts(log, "aborted")).toEqual([])
  }, 120_000)

  it("with short timeouts Restate ends the attempt under the Agent, and AML stops it", async () => {
    await workerPair("")
    writeFileSync(callLog, "")
    const id = `hasty-${process.pid}-${++ids}`
    const submitted = await fetch(`${server.ingress}/Hasty/${id}/run/send`, { body: "{}", headers: { "content-type": "application/json" }, method: "POST" })
    const { invocationId } = (await submitted.json()) as { invocationId: string }
    const deadline = Date.now() + 60_000
    while (!calls().some((call) => call.event === "aborted") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(prompts(calls(), "aborted")).toContain("slow")
    expect(prompts(calls(), "settled")).not.toContain("slow")
    await server.cancel(invocationId)
  }, 120_000)
})
