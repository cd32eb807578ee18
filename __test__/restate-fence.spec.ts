// The journal object's rules (docs/DURABLE.md: "The attempt fence", "Runs", "Trust",
// "Failures"), against a real restate-server on 127.0.0.1 and the object served by a Node 22
// worker. The spec plays the attempts itself, over the ingress, in a fixed order: e.g. a dead
// worker's late record (attempt A) arrives after the retry (attempt B) loaded the journal.
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect } from "vitest"

import { describeFailure, type AmlJournalEntry } from "@aml-jsx/sdk"
import { createRestateJournal } from "@aml-jsx/sdk/restate"

import { startRestate, startWorker, workerSecret, type RestateServer, type Worker } from "./support/restate.js"
import { quietWarnings } from "./support/expected-warnings.js"
import { testNeeding } from "./support/test-groups.js"

// Needs Node 22 (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("node22")

const script = fileURLToPath(new URL("./fixtures/restate/journal-worker.mjs", import.meta.url))
const OBJECT = "FenceJournal"

let server: RestateServer
let worker: Worker
let keys = 0

beforeAll(async () => {
  server = await startRestate()
  worker = await startWorker(script, { INGRESS: server.ingress, RESTATE_LOGGING: "ERROR" })
  await server.register(`http://127.0.0.1:${worker.port}`)
}, 180_000)

// This file forges journal entries: the AML_JOURNAL_IGNORED warnings they cause are expected
// (one test asserts them), so they are not printed.
let printWarnings = () => {}
beforeAll(() => {
  printWarnings = quietWarnings("AML_JOURNAL_IGNORED")
})
afterAll(() => printWarnings())

afterAll(async () => {
  await worker?.stop()
  await server?.stop()
}, 60_000)

const freshKey = () => `fence-${process.pid}-${++keys}`

function entry(key: string, text: string): AmlJournalEntry {
  return { key, digest: `d-${key}`, kind: "agent", value: { text } }
}

/** Runs `use` with a journal of workflow `key` for attempt `attempt` (none: no header). */
async function asAttempt<T>(
  key: string,
  attempt: string | undefined,
  use: (journal: ReturnType<typeof createRestateJournal>) => Promise<T>,
  more: { run?: string; secret?: string; object?: string } = {},
) {
  const journal = createRestateJournal({
    ingress: server.ingress,
    object: OBJECT,
    key,
    secret: workerSecret,
    ...(attempt === undefined ? {} : { attempt }),
    ...more,
  })
  try {
    return await use(journal)
  } finally {
    journal.close()
  }
}

type More = { run?: string; secret?: string; object?: string }
const load = (key: string, attempt?: string, more?: More) => asAttempt(key, attempt, async (journal) => [...(await journal.entries())] as AmlJournalEntry[], more)
const record = (key: string, attempt: string | undefined, step: AmlJournalEntry, more?: More) =>
  asAttempt(key, attempt, async (journal) => journal.append(step), more).then(() => undefined, (error: unknown) => error as Error & { code?: string })
const loadError = (key: string, attempt?: string, more?: More) => load(key, attempt, more).then(() => undefined, (error: unknown) => error as Error & { code?: string })

/** A request to the journal object over the ingress, as anyone who reaches it could send. */
async function raw(key: string, handler: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.ingress}/${OBJECT}/${encodeURIComponent(key)}/${handler}`, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
    method: "POST",
  })
  return { status: response.status, text: await response.text() }
}

/** The stored entries `page` answers from position 0: frames of u32 length + JSON bytes after an 8-byte next position. */
async function readPage(key: string, headers: Record<string, string>) {
  const response = await fetch(`${server.ingress}/${OBJECT}/${encodeURIComponent(key)}/page`, {
    body: JSON.stringify({ from: 0 }),
    headers: { "content-type": "application/json", ...headers },
    method: "POST",
  })
  const bytes = Buffer.from(await response.arrayBuffer())
  const entries: { key: string; digest: string; sealed: string }[] = []
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    entries.push(JSON.parse(bytes.subarray(at + 4, at + 4 + length).toString("utf8")))
    at += 4 + length
  }
  return entries
}

/** Replaces the object's whole state for `key` through Restate's admin API (past the handlers). */
async function writeState(key: string, state: Record<string, string>) {
  const encoded = Object.fromEntries(Object.entries(state).map(([name, text]) => [name, [...Buffer.from(text)]]))
  const response = await fetch(`${server.admin}/services/${OBJECT}/state`, {
    body: JSON.stringify({ object_key: key, new_state: encoded }),
    headers: { "content-type": "application/json" },
    method: "POST",
  })
  expect(response.status, await response.text()).toBeLessThan(300)
}

describe("the journal object's attempt fence", () => {
  it("refuses a late record of an attempt older than the last load, and keeps the loader's", async () => {
    const key = freshKey()
    expect(await load(key, "attempt-B")).toEqual([])
    // The dead worker's record, arriving after the retry loaded.
    const late = await record(key, "attempt-A", entry("0/a", "from A"))
    expect(late).toBeInstanceOf(Error)
    expect(late!.message.startsWith("AML Restate journal could not record step 0/a: Restate answered 409: ")).toBe(true)
    expect(late!.message).toContain(
      "AML Restate journal refused step 0/a from attempt attempt-A: attempt attempt-B has loaded this journal since, and only its records are kept",
    )
    expect(await load(key)).toEqual([])
    // The refusal was terminal: the object is free, and the loader's own record is stored.
    expect(await record(key, "attempt-B", entry("0/a", "from B"))).toBeUndefined()
    expect(await load(key)).toEqual([entry("0/a", "from B")])
  })

  it("keeps records sent before the retry's load: that load returned them", async () => {
    const key = freshKey()
    expect(await record(key, "attempt-A", entry("0/a", "from A"))).toBeUndefined()
    expect(await load(key, "attempt-B")).toEqual([entry("0/a", "from A")])
    expect(await record(key, "attempt-A", entry("1/b", "from A"))).toBeInstanceOf(Error)
    expect(await record(key, "attempt-B", entry("1/b", "from B"))).toBeUndefined()
    expect(await load(key, "attempt-C")).toEqual([entry("0/a", "from A"), entry("1/b", "from B")])
  })

  it("takes a record without the header only until an attempt loaded, and a load without it leaves the fence", async () => {
    const key = freshKey()
    expect(await record(key, undefined, entry("0/a", "plain"))).toBeUndefined()
    // A load without a token reads and stores no holder: later records of any kind are kept.
    expect(await load(key)).toEqual([entry("0/a", "plain")])
    expect(await record(key, undefined, entry("1/b", "plain"))).toBeUndefined()
    expect(await record(key, "attempt-A", entry("2/c", "from A"))).toBeUndefined()
    expect(await load(key, "attempt-B")).toHaveLength(3)
    const refused = await record(key, undefined, entry("3/d", "plain"))
    expect(refused!.message).toContain(
      "AML Restate journal refused step 3/d from a request without the x-aml-journal-attempt header: attempt attempt-B has loaded this journal since, and only its records are kept",
    )
    // Reading without a token did not move the fence from B.
    expect(await load(key)).toHaveLength(3)
    expect(await record(key, "attempt-B", entry("3/d", "from B"))).toBeUndefined()
    expect(await load(key)).toHaveLength(4)
  })
})

describe("a journal belongs to one run", () => {
  it("a load for a new run starts from nothing, and records of the old run are refused", async () => {
    const key = freshKey()
    expect(await load(key, "a1", { run: "run-1" })).toEqual([])
    expect(await record(key, "a1", entry("0/a", "old answer"), { run: "run-1" })).toBeUndefined()
    expect(await load(key, "a2", { run: "run-1" })).toEqual([entry("0/a", "old answer")])
    // The same workflow id runs again (after Restate purged the first run).
    expect(await load(key, "b1", { run: "run-2" })).toEqual([])
    const late = await record(key, "a2", entry("1/b", "late"), { run: "run-1" })
    expect(late!.message).toContain("AML Restate journal refused step 1/b of run run-1: the journal holds run run-2")
    expect(late!.code).toBe("AML_JOURNAL_FENCED")
    expect(await record(key, "b1", entry("0/a", "new answer"), { run: "run-2" })).toBeUndefined()
    expect(await load(key, "b2", { run: "run-2" })).toEqual([entry("0/a", "new answer")])
  })

  it("clear removes the ending run's journal, and never a newer run's", async () => {
    const key = freshKey()
    expect(await load(key, "a1", { run: "run-1" })).toEqual([])
    expect(await record(key, "a1", entry("0/a", "x"), { run: "run-1" })).toBeUndefined()
    expect((await raw(key, "clear", { run: "run-0" })).status).toBe(200)
    expect(await load(key, undefined, { run: "run-1" })).toHaveLength(1)
    expect((await raw(key, "clear", { run: "run-1" })).status).toBe(200)
    const state = await fetch(`${server.admin}/query`, {
      body: JSON.stringify({ query: `SELECT key FROM state WHERE service_name = '${OBJECT}' AND service_key = '${key}'` }),
      headers: { "content-type": "application/json", accept: "application/json" },
      method: "POST",
    })
    expect(state.status).toBe(200)
    expect((await state.json()) as { rows: unknown[] }).toEqual({ rows: [] })
  })
})

describe("an entry no worker of this deployment wrote is never replayed", () => {
  it("ignores forged, re-sealed and tampered entries, and the steps record again", async () => {
    const key = freshKey()
    const run = { run: "run-1" }
    expect(await load(key, "a1", run)).toEqual([])
    expect(await record(key, "a1", entry("0/a", "genuine"), run)).toBeUndefined()
    // Anyone on the ingress: loads with a token of their own (taking the fence) and records.
    const headers = { "x-aml-journal-run": "run-1", "x-aml-journal-attempt": "intruder" }
    expect((await raw(key, "load", null, headers)).status).toBe(200)
    const forged = await raw(key, "record", { key: "1/b", digest: "d-1/b", sealed: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, headers)
    expect(forged.status).toBe(200)
    // Sealed, but with another deployment's secret, and one moved from step 0/a to 2/c.
    expect(await record(key, "intruder", entry("3/d", "other secret"), { ...run, secret: "another deployment's secret, 32+ chars" })).toBeUndefined()
    const genuine = (await readPage(key, headers)).find((stored) => stored.key === "0/a")!
    expect(genuine.sealed).not.toContain("genuine")
    expect((await raw(key, "record", { ...genuine, key: "2/c", digest: "d-2/c" }, headers)).status).toBe(200)
    // The live attempt's records are fenced out now (409): its retry loads afresh.
    const fenced = await record(key, "a1", entry("4/e", "x"), run)
    expect(fenced!.code).toBe("AML_JOURNAL_FENCED")
    expect(describeFailure(fenced)).toEqual({ kind: "journal", message: "AML Restate journal could not record step 4/e", retryable: true })
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on("warning", onWarning)
    try {
      expect(await load(key, "a2", run)).toEqual([entry("0/a", "genuine")])
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off("warning", onWarning)
    }
    expect(warnings).toEqual([
      `AML Restate journal ${OBJECT}/${key} holds 3 entries that no worker of this deployment recorded for this run (forged, malformed or sealed with another secret); they are ignored and their steps run again`,
    ])
    // The retry records those steps itself, and they replace what was forged.
    expect(await record(key, "a2", entry("1/b", "real b"), run)).toBeUndefined()
    expect(await record(key, "a2", entry("2/c", "real c"), run)).toBeUndefined()
    expect(await load(key, "a3", run)).toEqual([entry("0/a", "genuine"), entry("1/b", "real b"), entry("2/c", "real c")])
  })

  it("refuses a record of the wrong shape by the loader's own rule, and state written past the handlers never makes the id unrecoverable", async () => {
    const key = freshKey()
    const headers = { "x-aml-journal-run": "run-1" }
    for (const body of [{ key: "0/a", digest: "d" }, { key: "0/a", digest: "d", kind: "agent", value: { text: "x" } }]) {
      const refused = await raw(key, "record", body, headers)
      expect(refused.status).toBe(400)
      expect(refused.text).toContain("AML Restate journal entries must be { key, digest, sealed } records of strings")
    }
    expect(await load(key, "a1", { run: "run-1" })).toEqual([])
    await writeState(key, { fence: JSON.stringify({ run: "run-1", holder: "a2" }), "step:0/a": JSON.stringify({ key: "0/a", digest: "d" }), "step:1/b": "not json at all" })
    expect(await load(key, "a2", { run: "run-1" })).toEqual([])
    expect(await record(key, "a2", entry("0/a", "fine"), { run: "run-1" })).toBeUndefined()
    expect(await load(key, "a3", { run: "run-1" })).toEqual([entry("0/a", "fine")])
  })
})

describe("journal failures say whether a retry can help", () => {
  it("an unregistered journal object is a configuration failure that says how to fix the deployment", async () => {
    const error = await loadError(freshKey(), "a1", { object: "NoSuchJournal" })
    expect(error!.code).toBe("AML_JOURNAL_DEPLOYMENT")
    expect(error!.message).toMatch(/^AML Restate journal could not load NoSuchJournal\/fence-\d+-\d+: Restate answered 404: /)
    expect(error!.message).toContain(
      "(the journal object NoSuchJournal is not registered at this ingress: bind the workflow's `journal` to the same endpoint as its `workflow` and register the deployment)",
    )
    expect(describeFailure(error)).toMatchObject({ kind: "configuration", retryable: false })
  })
})
