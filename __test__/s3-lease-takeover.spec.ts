// Another host continues where a dead worker saved (issue 34 §6): with `lockLeaseMs`, an S3
// Workspace whose holder died is taken over by a worker that cannot see the holder's process
// once the holder's lease ran out, not after the reference's 20 minutes. The two workers run
// in PID namespaces of their own (`unshare --pid --fork --mount-proc`), so the taker's
// same-host check of the recorded pid proves nothing and only the lease decides, as between
// two hosts. The holder acquires, saves a revision and is SIGKILLed while holding the lock;
// the taker is refused while the holder lives and right after its death, then continues from
// the saved revision. Without the lease it never does (the 20-minute stale time), which the
// hang guard turns into a failure.
//
// Needs root (unshare) and the moto S3 server (scripts/test-groups.js): skipped, and named
// so, where this machine lacks either.

import { spawn, type ChildProcess } from "node:child_process"
import { readFileSync, readlinkSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { randomUUID } from "node:crypto"

import { GetObjectCommand } from "@aws-sdk/client-s3"
import { afterAll, afterEach, beforeAll, describe, expect } from "vitest"

import { delay } from "./support/async.js"
import { startMoto, type Moto } from "./support/moto.js"
import { testNeeding } from "./support/test-groups.js"

const it = testNeeding("moto", "root")

const fixture = fileURLToPath(new URL("./fixtures/s3-lease-worker.mjs", import.meta.url))
const LEASE_MS = 6_000
// Hang guards only, never timing claims: waiting for one event of a worker, and for the
// takeover (which without the lease would take 20 minutes).
const EVENT_GUARD_MS = 120_000
const TAKEOVER_GUARD_MS = 180_000

let moto: Moto
beforeAll(async () => {
  moto = await startMoto()
}, 180_000)
afterAll(async () => moto?.stop())

type Event = { event: string; pidNamespace: string; text?: string; revisionId?: string }

interface Worker {
  /** The `unshare` process; its forked child is the worker, pid 1 of a new PID namespace. */
  process: ChildProcess
  next(): Promise<Event>
  exited: Promise<unknown>
}

const workers: Worker[] = []
afterEach(async () => {
  // --kill-child: killing unshare kills the worker, and with it its whole namespace.
  for (const worker of workers.splice(0)) {
    if (worker.process.exitCode === null && worker.process.signalCode === null) worker.process.kill("SIGKILL")
    await worker.exited
  }
})

function start(argument: unknown): Worker {
  const child = spawn(
    "unshare",
    ["--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL", process.execPath, fixture, JSON.stringify(argument)],
    { stdio: ["pipe", "pipe", "pipe"] },
  )
  let errors = ""
  child.stderr!.on("data", (chunk) => (errors += chunk))
  const exited = new Promise((resolve) => child.on("exit", resolve))
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async (): Promise<Event> => {
    let timer: NodeJS.Timeout | undefined
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`worker sent nothing within ${EVENT_GUARD_MS} ms: ${errors}`)), EVENT_GUARD_MS)
    })
    try {
      const line = await Promise.race([lines.next(), guard])
      if (line.done) throw new Error(`worker exited (${child.exitCode ?? child.signalCode}): ${errors}`)
      return JSON.parse(line.value)
    } finally {
      clearTimeout(timer)
    }
  }
  const worker = { exited, next, process: child }
  workers.push(worker)
  return worker
}

/** The pid (in our namespace) of the worker `unshare` forked. */
function workerPid(worker: Worker): number {
  const pid = worker.process.pid!
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)
  expect(children).toHaveLength(1)
  return Number(children[0])
}

async function lockUpdatedAt(bucket: string, id: string): Promise<string> {
  const reply = await moto.client().send(new GetObjectCommand({ Bucket: bucket, Key: `aml/workspaces/${id}/lock.json` }))
  return JSON.parse(await reply.Body!.transformToString()).updatedAt
}

describe("a dead holder's S3 Workspace on another host (lockLeaseMs)", () => {
  for (const path of ["native", "client"] as const) {
    it(`a worker in another PID namespace continues a dead holder's S3 Workspace within the configured lease time (${path === "native" ? "native client" : "application S3Client"})`, async () => {
      const bucket = await moto.bucket()
      const id = "durable-review"
      const config = { credentials: { accessKeyId: "testing", secretAccessKey: "testing" }, endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" }
      // Both workers use one client path: the native client, or (`client`) an S3Client the
      // worker builds from `config`.
      const options = { bucket, config, lockLeaseMs: LEASE_MS }
      const client = path === "client"
      const text = `saved by the dead holder ${randomUUID()}`

      const holder = start({ client, id, options, role: "holder", text })
      const saved = await holder.next()
      expect(saved.event).toBe("saved")
      const taker = start({ client, id, options, role: "taker" })
      const ready = await taker.next()
      expect(ready.event).toBe("ready")
      // Three PID namespaces: the taker cannot see the holder's pid, so no liveness proof.
      const ours = readlinkSync("/proc/self/ns/pid")
      expect(new Set([ours, saved.pidNamespace, ready.pidNamespace]).size).toBe(3)
      const attempt = async () => {
        taker.process.stdin!.write("try\n")
        return taker.next()
      }

      // A live holder renews its lease: refused.
      expect((await attempt()).event).toBe("conflict")

      // Kill the holder right after one of its renewals, so a whole lease lies ahead.
      const renewed = await lockUpdatedAt(bucket, id)
      const renewalDeadline = Date.now() + EVENT_GUARD_MS
      while ((await lockUpdatedAt(bucket, id)) === renewed) {
        if (Date.now() > renewalDeadline) throw new Error(`the holder did not renew within ${EVENT_GUARD_MS} ms (lease ${LEASE_MS} ms)`)
        await delay(50)
      }
      const pid = workerPid(holder)
      process.kill(pid, "SIGKILL")
      await holder.exited
      expect(holder.process.exitCode ?? holder.process.signalCode).not.toBe(0)

      // Dead, but its lease has not run out: still refused.
      expect((await attempt()).event).toBe("conflict")

      // Then the lease runs out and the taker continues from the saved revision.
      const deadline = Date.now() + TAKEOVER_GUARD_MS
      let outcome = await attempt()
      while (outcome.event === "conflict") {
        if (Date.now() > deadline) throw new Error(`no takeover within ${TAKEOVER_GUARD_MS} ms (lease ${LEASE_MS} ms)`)
        await delay(250)
        outcome = await attempt()
      }
      expect(outcome.event).toBe("acquired")
      expect(outcome.text).toBe(text)
      expect(outcome.revisionId).toEqual(expect.any(String))
      await taker.exited
      expect(taker.process.exitCode).toBe(0)
    }, 600_000)
  }
})
