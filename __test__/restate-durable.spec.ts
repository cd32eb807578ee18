// AML workflows on Restate (docs/DURABLE.md, issue 23), against a real restate-server on
// 127.0.0.1 and workers on Node 22 behind one loopback proxy. A worker SIGKILLs itself at a
// chosen point (fixtures/restate/worker.mjs, KILL); Restate retries on the other worker, which
// replays what the journal object holds. Provider calls are logged to a file outside the workers.
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { startProxy, startRestate, startWorker, type Proxy, type RestateServer, type Worker } from "./support/restate.js"

const script = fileURLToPath(new URL("./fixtures/restate/worker.mjs", import.meta.url))
const callLog = join(tmpdir(), `aml-restate-calls-${process.pid}.jsonl`)

interface Call {
  pid: number
  event: string
  prompt?: string
  workflow?: string
  key?: string
}

let server: RestateServer
let proxy: Proxy
/** The workers the proxy forwards to, first alive first. */
let workers: Worker[] = []
let ids = 0

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
  const base = { CALL_LOG: callLog, INGRESS: server.ingress, RESTATE_LOGGING: "ERROR" }
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

beforeAll(async () => {
  writeFileSync(callLog, "")
  server = await startRestate()
  proxy = await startProxy(() => workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null).map((worker) => worker.port))
  await workerPair("")
  await server.register(proxy.uri)
}, 180_000)

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()))
  await proxy?.stop()
  await server?.stop()
  rmSync(callLog, { force: true })
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
