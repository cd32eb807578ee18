// Durable workflows under the faults production brings (issue 34, docs/DURABLE.md "Failures",
// "Runs", "Size"): a real restate-server on 127.0.0.1, two Node 22 workers behind one loopback
// proxy, and a recorder between the workers and the ingress that strikes one journal request
// (an injected 503, or a record held past the worker's journal timeout). Provider calls are
// logged to a file outside the workers.
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect } from "vitest"

import { startRecorder, type Recorded, type Recorder } from "./support/restate-recorder.js"
import { livePorts, startProxy, startRestate, startWorker, workerSecret, type Proxy, type RestateServer, type Worker } from "./support/restate.js"
import { testNeeding } from "./support/test-groups.js"

// Needs Node 22 (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("node22")

const script = fileURLToPath(new URL("./fixtures/restate/worker.mjs", import.meta.url))
const callLog = join(tmpdir(), `aml-restate-faults-${process.pid}.jsonl`)
const versionFile = join(tmpdir(), `aml-restate-version-${process.pid}.txt`)

let server: RestateServer
let proxy: Proxy
let recorder: Recorder
let workers: Worker[] = []
let records: Recorded[] = []
/** What a spec does when a record was answered, before the worker hears of it. */
let onRecord: ((recorded: Recorded) => Promise<void>) | undefined
let ids = 0

interface Call {
  pid: number
  event: string
  prompt?: string
}

function calls(): Call[] {
  return readFileSync(callLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Call)
}

const started = (prompt: string) => calls().filter((call) => call.event === "start" && call.prompt === prompt).length
const attempts = () => calls().filter((call) => call.event === "attempt").length

async function submit(name: string, input: unknown, id: string) {
  const response = await fetch(`${server.ingress}/${name}/${id}/run/send`, {
    body: JSON.stringify(input),
    headers: { "content-type": "application/json" },
    method: "POST",
  })
  return (await response.json()) as { invocationId: string; status: string }
}

/** Runs workflow `name` under `id` (fresh by default) and waits for its outcome. */
async function runWorkflow(name: string, input: unknown = {}, id = `faults-${process.pid}-${++ids}`) {
  const receipt = await submit(name, input, id)
  const output = await fetch(`${server.ingress}/restate/workflow/${name}/${id}/attach`)
  return { id, receipt, status: output.status, body: await output.text() }
}

/** Clears the call log and the records, then runs `run`. */
async function fresh<T>(run: () => Promise<T>): Promise<T> {
  writeFileSync(callLog, "")
  records = []
  return run()
}

const CHAIN = JSON.stringify("step 1 ok|step 2 ok|step 3 ok|step 4 ok|step 5 ok|step 6 ok")

beforeAll(async () => {
  writeFileSync(callLog, "")
  writeFileSync(versionFile, "1")
  server = await startRestate()
  recorder = await startRecorder(server.ingress, workerSecret, async (recorded) => {
    records.push(recorded)
    await onRecord?.(recorded)
  })
  proxy = await startProxy(() => livePorts(workers))
  // The intruder below forges an entry: the worker's AML_JOURNAL_IGNORED warning about it is
  // the expected outcome (the spec checks its effect), so the workers do not print it.
  const quiet = "--disable-warning=AML_JOURNAL_IGNORED"
  const env = { CALL_LOG: callLog, INGRESS: recorder.url, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${quiet}`.trim(), RESTATE_LOGGING: "ERROR", VERSION_FILE: versionFile }
  workers = [await startWorker(script, env), await startWorker(script, env)]
  await server.register(proxy.uri)
}, 180_000)

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()))
  await proxy?.stop()
  await recorder?.close()
  await server?.stop()
  rmSync(callLog, { force: true })
  rmSync(versionFile, { force: true })
  for (const pid of [...workers.map((worker) => worker.child.pid), server?.pid]) {
    expect(() => process.kill(pid!, 0), `pid ${pid}`).toThrow()
  }
}, 60_000)

describe("a transient journal failure is retried, not final", () => {
  it("one 503 on a record: the attempt fails, Restate retries it, and the workflow completes from the journal", async () => {
    recorder.arm({ handler: "record", object: "StruckJournal", after: 2, status: 503 })
    const done = await fresh(() => runWorkflow("Struck"))
    expect(done.status, done.body).toBe(200)
    expect(done.body).toBe(CHAIN)
    expect(recorder.struck()).toBe(1)
    expect(attempts()).toBe(2)
    // Steps 1-2 were recorded and replay; step 3's record was struck, so it runs again.
    expect([1, 2, 3, 4, 5, 6].map((i) => started(`step ${i}`))).toEqual([1, 1, 2, 1, 1, 1])
  }, 120_000)

  it("one 503 on the first load: nothing ran yet, and the retry runs every step once", async () => {
    const before = recorder.struck()
    recorder.arm({ handler: "load", object: "StruckJournal", status: 503 })
    const done = await fresh(() => runWorkflow("Struck"))
    expect(done.status, done.body).toBe(200)
    expect(done.body).toBe(CHAIN)
    expect(recorder.struck()).toBe(before + 1)
    expect(attempts()).toBe(2)
    expect([1, 2, 3, 4, 5, 6].map((i) => started(`step ${i}`))).toEqual([1, 1, 1, 1, 1, 1])
  }, 120_000)

  it("a record answered after the journal timeout: the attempt is retried and completes; the late record cannot win", async () => {
    const before = recorder.struck()
    // Held 4 s against journalTimeoutMs 1000: the worker gives up on it while it is in flight.
    recorder.arm({ handler: "record", object: "TimelyJournal", after: 2, holdMs: 4000 })
    const done = await fresh(() => runWorkflow("Timely"))
    expect(done.status, done.body).toBe(200)
    expect(done.body).toBe(CHAIN)
    expect(recorder.struck()).toBe(before + 1)
    expect(attempts()).toBe(2)
    expect([1, 2, 4, 5, 6].map((i) => started(`step ${i}`))).toEqual([1, 1, 1, 1, 1])
    // Step 3 ran again unless the held record landed before the retry loaded.
    expect(started("step 3")).toBeGreaterThanOrEqual(1)
  }, 120_000)
})

describe("an intruder on the ingress", () => {
  it("forges an answer mid-run: it is never replayed, and the workflow completes with the genuine result", async () => {
    const ingress = (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${server.ingress}${path}`, { body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers }, method: "POST" }).then((response) => response.status)
    const statuses: number[] = []
    onRecord = async (recorded) => {
      if (recorded.object !== "StruckJournal" || records.length !== 2) return
      // After step 2 was recorded: load under a token of its own (taking the fence), then
      // replace step 1's entry with a forged one under the same key and digest.
      const first = records[0]!
      const headers = { "x-aml-journal-run": recorded.run, "x-aml-journal-attempt": "intruder" }
      const path = `/StruckJournal/${encodeURIComponent(recorded.workflow)}`
      statuses.push(await ingress(`${path}/load`, null, headers))
      statuses.push(await ingress(`${path}/record`, { key: first.key, digest: first.digest, sealed: Buffer.from("step 1 FORGED").toString("base64url") }, headers))
    }
    try {
      const done = await fresh(() => runWorkflow("Struck"))
      expect(statuses).toEqual([200, 200])
      expect(done.status, done.body).toBe(200)
      expect(done.body).toBe(CHAIN)
      // The live attempt's next record was fenced out; the retry ignored the forged entry, so
      // step 1 ran again, and step 3, whose record was refused.
      expect(attempts()).toBe(2)
      expect([1, 2, 3, 4, 5, 6].map((i) => started(`step ${i}`))).toEqual([2, 1, 2, 1, 1, 1])
    } finally {
      onRecord = undefined
    }
  }, 120_000)
})

describe("a workflow id run again after a purge", () => {
  it("calls every Agent again and returns the new answers", async () => {
    const id = `purged-${process.pid}-${++ids}`
    const first = await fresh(() => runWorkflow("Versioned", {}, id))
    expect(first.status, first.body).toBe(200)
    expect(JSON.parse(first.body)).toBe("step 1 ok v1|step 2 ok v1|step 3 ok v1|step 4 ok v1|step 5 ok v1|step 6 ok v1")
    const purged = await fetch(`${server.admin}/invocations/${encodeURIComponent(first.receipt.invocationId)}/purge`, { method: "PATCH" })
    expect(purged.status, await purged.text()).toBeLessThan(300)
    writeFileSync(versionFile, "2")
    // Restate may still be finishing the purge: resubmit until it accepts the id as new.
    let again = await fresh(() => runWorkflow("Versioned", {}, id))
    for (let tries = 0; again.receipt.status !== "Accepted" && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      again = await fresh(() => runWorkflow("Versioned", {}, id))
    }
    expect(again.receipt.status).toBe("Accepted")
    expect(again.status, again.body).toBe(200)
    expect(JSON.parse(again.body)).toBe("step 1 ok v2|step 2 ok v2|step 3 ok v2|step 4 ok v2|step 5 ok v2|step 6 ok v2")
    expect([1, 2, 3, 4, 5, 6].map((i) => started(`step ${i}`))).toEqual([1, 1, 1, 1, 1, 1])
  }, 120_000)
})

describe("a large journal", () => {
  it("30 sequential Agents answering 1 MiB each complete, and a record costs what its entry costs", async () => {
    const traffic = proxy.traffic()
    const done = await fresh(() => runWorkflow("Large", { n: 30 }))
    expect(done.status, done.body).toBe(200)
    const sizes = (JSON.parse(done.body) as string).split(",").map(Number)
    expect(sizes).toHaveLength(30)
    expect(records.filter((record) => record.object === "LargeJournal")).toHaveLength(30)
    const journalBytes = records.reduce((sum, record) => sum + record.bytes, 0)
    expect(journalBytes).toBeGreaterThan(30 * (1 << 20))
    // What Restate sent the workers for this run: each record's own entry, not the journal so
    // far. With the whole state shipped to every record it is about 15 times the journal.
    const sent = proxy.traffic().toWorkers - traffic.toWorkers
    expect(sent).toBeLessThan(3 * journalBytes)
    const times = records.map((record) => record.ms)
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    console.log(`large journal: ${(journalBytes / 2 ** 20).toFixed(1)} MiB recorded, ${(sent / 2 ** 20).toFixed(1)} MiB sent to the workers; record median first 5 ${median(times.slice(0, 5)).toFixed(1)} ms, last 5 ${median(times.slice(-5)).toFixed(1)} ms`)
  }, 300_000)
})
