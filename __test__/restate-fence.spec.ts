// The journal object's attempt fence (docs/DURABLE.md "The attempt fence"), against a real
// restate-server on 127.0.0.1 and the object served by a Node 22 worker. The spec plays the
// attempts itself, over the ingress, in a fixed order: a dead worker's late record (attempt A)
// arrives after the retry (attempt B) loaded the journal.
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect } from "vitest"

import type { AmlJournalEntry } from "@aml-jsx/sdk"
import { createRestateJournal } from "@aml-jsx/sdk/restate"

import { startRestate, startWorker, type RestateServer, type Worker } from "./support/restate.js"
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

afterAll(async () => {
  await worker?.stop()
  await server?.stop()
}, 60_000)

const freshKey = () => `fence-${process.pid}-${++keys}`

function entry(key: string, text: string): AmlJournalEntry {
  return { key, digest: `d-${key}`, kind: "agent", value: { text } }
}

/** Runs `use` with a journal of workflow `key` for attempt `attempt` (none: no header). */
async function asAttempt<T>(key: string, attempt: string | undefined, use: (journal: ReturnType<typeof createRestateJournal>) => Promise<T>) {
  const journal = createRestateJournal({ ingress: server.ingress, object: OBJECT, key, ...(attempt === undefined ? {} : { attempt }) })
  try {
    return await use(journal)
  } finally {
    journal.close()
  }
}

const load = (key: string, attempt?: string) => asAttempt(key, attempt, async (journal) => [...(await journal.entries())] as AmlJournalEntry[])
const record = (key: string, attempt: string | undefined, step: AmlJournalEntry) =>
  asAttempt(key, attempt, async (journal) => journal.append(step)).then(() => undefined, (error: unknown) => error as Error)

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
