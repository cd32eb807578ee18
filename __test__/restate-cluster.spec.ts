// AML workflows on a three-node Restate cluster (docs/DURABLE.md "Cluster", issue 34 §4): real
// restate-server processes on 127.0.0.1 with replicated metadata, log and partitions
// (scripts/restate-cluster.js). The durable core case runs with two faults: the server node that
// leads the partition is SIGKILLed right after Agent 2's journal record is stored, and the
// worker SIGKILLs itself before Agent 4 (fixtures/restate/worker.mjs, KILL). The workers and the
// spec reach the cluster through one proxy in front of the three ingresses, so the dead node's
// ingress is not a single point of failure: any node may be the one that dies.
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect } from "vitest"

import { startCluster, type ClusterNode, type RestateCluster } from "./support/restate-cluster.js"
import { startRecorder, type Recorded, type Recorder } from "./support/restate-recorder.js"
import { livePorts, startProxy, startWorker, workerSecret, type Proxy, type Worker } from "./support/restate.js"
import { testNeeding } from "./support/test-groups.js"

// Needs Node 22 for the workers (scripts/test-groups.js): skipped, and named so, where it is missing.
const it = testNeeding("node22")

const script = fileURLToPath(new URL("./fixtures/restate/worker.mjs", import.meta.url))
const callLog = join(tmpdir(), `aml-restate-cluster-calls-${process.pid}.jsonl`)

interface Call {
  pid?: number
  event: string
  prompt?: string
}

let cluster: RestateCluster | undefined
let proxy: Proxy | undefined
let recorder: Recorder | undefined
let workers: Worker[] = []
/** Every worker started, for the afterAll check that none is left. */
const started: Worker[] = []
let ids = 0
/** Set by the test: the node to SIGKILL once this prompt's record is stored. */
let killOnRecord: { prompt: string; node: ClusterNode } | undefined

function calls(): Call[] {
  const text = existsSync(callLog) ? readFileSync(callLog, "utf8") : ""
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Call)
}

/**
 * A step is settled once Restate answered its journal record. The recorder (between the workers
 * and the cluster) logs that answer before the worker sees it; for the armed prompt it then
 * SIGKILLs the chosen node and waits for it to exit, so the kill falls exactly between Agent 2
 * settling and Agent 3 starting, whatever the machine's speed.
 */
async function onRecorded(recorded: Recorded) {
  const prompt = recorded.text?.replace(/ ok$/, "")
  appendFileSync(callLog, `${JSON.stringify({ event: "recorded", prompt })}\n`)
  if (killOnRecord !== undefined && killOnRecord.prompt === prompt) {
    const { node } = killOnRecord
    killOnRecord = undefined
    appendFileSync(callLog, `${JSON.stringify({ event: "node killed", prompt: node.name })}\n`)
    await node.kill()
  }
}

/** Replaces the workers with a first one (`kill`: its KILL rule) and a healthy second one. */
async function workerPair(kill: string) {
  await Promise.all(workers.map((worker) => worker.stop()))
  const env = { CALL_LOG: callLog, INGRESS: recorder!.url, RESTATE_LOGGING: "ERROR" }
  workers = [await startWorker(script, { ...env, KILL: kill }), await startWorker(script, env)]
  started.push(...workers)
}

/**
 * The ingress may drop a connection when its node dies, or answer 5xx while the partition
 * fails over: both are retried until a hang guard. Any other answer is returned.
 */
async function ingress(path: string, init?: RequestInit): Promise<Response> {
  const deadline = Date.now() + 150_000
  for (;;) {
    try {
      // The attach waits for the workflow; the signal turns a cluster that cannot go on into a failure here.
      const response = await fetch(`${cluster!.ingress}${path}`, { ...init, signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) })
      if (response.status < 500 || Date.now() > deadline) return response
      await response.arrayBuffer()
    } catch (error) {
      if (Date.now() > deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** Submits workflow `name` under a fresh id and waits for its outcome. */
async function runWorkflow(name: string) {
  const id = `cluster-${process.pid}-${++ids}`
  const submitted = await ingress(`/${name}/${id}/run/send`, { body: "{}", headers: { "content-type": "application/json" }, method: "POST" })
  expect(submitted.status, await submitted.clone().text()).toBeLessThan(300)
  const output = await ingress(`/restate/workflow/${name}/${id}/attach`)
  return { status: output.status, body: await output.text() }
}

const prompts = (log: Call[], event: string) => log.filter((call) => call.event === event).map((call) => call.prompt)

beforeAll(async () => {
  writeFileSync(callLog, "")
  cluster = await startCluster()
  recorder = await startRecorder(cluster.ingress, workerSecret, onRecorded)
  proxy = await startProxy(() => livePorts(workers))
  await workerPair("")
  // Through one node's admin API; the deployment is cluster metadata, replicated to all three.
  await cluster.register(proxy.uri)
}, 240_000)

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()))
  await proxy?.stop()
  await recorder?.close()
  await cluster?.stop()
  rmSync(callLog, { force: true })
  // Nothing is left behind: no worker or server process, no data directory.
  for (const pid of [...started.map((worker) => worker.child.pid), ...(cluster?.nodes ?? []).map((node) => node.pid)]) {
    expect(() => process.kill(pid!, 0), `pid ${pid}`).toThrow()
  }
  for (const node of cluster?.nodes ?? []) expect(existsSync(node.dataDir), node.dataDir).toBe(false)
}, 120_000)

describe("a three-node Restate cluster", () => {
  it("the partition's leader node and the worker die mid-run: the same result, no settled Agent runs twice", async () => {
    const clean = await runWorkflow("Chain")
    expect(clean.status, clean.body).toBe(200)
    expect(JSON.parse(clean.body)).toBe("step 1 ok|step 2 ok|step 3 ok|step 4 ok|step 5 ok|step 6 ok")

    // The node to kill is the one doing the work: it leads the (one) partition, which holds the
    // workflow's and the journal object's state and drives the invocation.
    const before = await cluster!.serving()
    expect(Object.keys(before).sort()).toEqual(["n1", "n2", "n3"])
    const leaders = Object.entries(before).filter(([, serving]) => serving.leads > 0)
    expect(leaders, JSON.stringify(before)).toHaveLength(1)
    const victim = cluster!.nodes.find((node) => node.name === leaders[0]![0])!
    expect(victim.alive()).toBe(true)
    // Replication 2: a follower on another node holds the partition too.
    expect(Object.values(before).reduce((total, serving) => total + serving.replicas, 0)).toBe(2)

    writeFileSync(callLog, "")
    await workerPair("before:step 4")
    killOnRecord = { prompt: "step 2", node: victim }
    const killed = await runWorkflow("Chain")
    expect(killed.status, killed.body).toBe(200)
    expect(killed.body).toBe(clean.body)

    const log = calls()
    expect(victim.child.signalCode).toBe("SIGKILL")
    expect(prompts(log, "node killed")).toEqual([victim.name])
    expect(workers[0]!.child.signalCode).toBe("SIGKILL")
    // No settled Agent runs twice: once Restate answered a step's record, no provider call for
    // that step starts again. Agents 1 and 2 settled before any fault: each ran exactly once.
    // Agent 3 was under way when the node died and may run again (at-least-once).
    const startedPrompts = prompts(log, "start")
    for (let i = 1; i <= 6; i++) {
      const step = `step ${i}`
      const settled = log.findIndex((call) => call.event === "recorded" && call.prompt === step)
      expect(settled, `${step} recorded: ${JSON.stringify(log)}`).toBeGreaterThanOrEqual(0)
      expect(startedPrompts, step).toContain(step)
      const after = log.slice(settled).filter((call) => call.event === "start" && call.prompt === step)
      expect(after, `${step} started after it settled: ${JSON.stringify(log)}`).toEqual([])
    }
    expect(startedPrompts.filter((prompt) => prompt === "step 1")).toHaveLength(1)
    expect(startedPrompts.filter((prompt) => prompt === "step 2")).toHaveLength(1)

    // The cluster failed over: a surviving node leads the partition. The workflow's completion
    // already needed a leader; the nodes' metrics report it a little later, so this polls
    // (a hang guard, not a timing assertion).
    const deadline = Date.now() + 60_000
    let after = await cluster!.serving()
    while (Object.values(after).reduce((total, serving) => total + serving.leads, 0) !== 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      after = await cluster!.serving()
    }
    expect(Object.keys(after).sort()).toEqual(["n1", "n2", "n3"].filter((name) => name !== victim.name))
    expect(Object.values(after).reduce((total, serving) => total + serving.leads, 0), JSON.stringify(after)).toBe(1)
  }, 240_000)
})
