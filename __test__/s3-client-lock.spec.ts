// The lock.json lease of the application-supplied S3Client path against moto.

import { GetObjectCommand, PutObjectCommand, DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3"
import { WorkspaceConflictError } from "@aml-jsx/sdk"
import { afterAll, beforeAll, describe, expect } from "vitest"

// @ts-expect-error internal module without declarations
import { createS3ClientStorage } from "../lib/workspace/s3/client-storage.js"
import { expectExact, rejection } from "./support/errors.js"
import { startMoto, type Moto } from "./support/moto.js"
import { testNeeding } from "./support/test-groups.js"

// Needs the moto S3 server (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("moto")

let moto: Moto
beforeAll(async () => {
  moto = await startMoto()
}, 180_000)
afterAll(async () => moto?.stop())

const LOCK = "aml/workspaces/ws/lock.json"
const request = { evaluationId: "e", id: "ws", lock: true, signal: new AbortController().signal }

async function setUp(options: { client?: S3Client } = {}) {
  const bucket = await moto.bucket()
  const s3 = options.client ?? moto.client()
  // `lockLeaseMs` (public, issue 34 §6) shortens a holder's lease: renewed every third of it.
  const make = (lockLeaseMs?: number) => createS3ClientStorage({ bucket, client: s3, lockLeaseMs, prefix: "aml/workspaces" })
  const lock = async () => {
    try {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: LOCK }))
      return JSON.parse(await out.Body!.transformToString())
    } catch (error: any) {
      if (error.name === "NoSuchKey") return undefined
      throw error
    }
  }
  const putLock = (body: string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: LOCK, Body: body }))
  return { bucket, s3, make, lock, putLock }
}

/** Polls `done` every 50 ms; the bound only guards against a hang. */
async function eventually(done: () => Promise<boolean>) {
  for (let i = 0; i < 600; i++) {
    if (await done()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

describe("S3 Workspace lock over an AWS SDK S3Client (moto)", () => {
  it("writes {token, updatedAt, leaseMs, holder}; a second owner gets WorkspaceConflictError; release deletes it", async () => {
    const { make, lock } = await setUp()
    const storage = make()
    const lease = await storage.acquire(request)
    const record = await lock()
    // The TypeScript SDK's {token, updatedAt}, plus the lease its holder renews by (issue 34 §6:
    // the reference's 20 minutes unless lockLeaseMs says otherwise) and who holds it (issue 22:
    // a crashed holder of this machine is taken over at once).
    expect(Object.keys(record)).toEqual(["token", "updatedAt", "leaseMs", "holder"])
    expect(record.leaseMs).toBe(1_200_000)
    expect(new Date(record.updatedAt).toISOString()).toBe(record.updatedAt)
    expect(record.holder).toMatchObject({ pid: process.pid })
    expect(Object.keys(record.holder).sort()).toEqual(["bootId", "hostname", "pid", "pidNamespace", "startTime"])
    const conflict = await rejection(storage.acquire(request))
    expectExact(conflict, WorkspaceConflictError, 'Workspace "ws" already has an active writer')
    expect(WorkspaceConflictError.is(conflict, "ws")).toBe(true)
    await (await storage.acquire({ ...request, lock: false })).release()
    await lease.release()
    await lease.release()
    expect(await lock()).toBeUndefined()
    await (await storage.acquire(request)).release()
  })

  it("renews on its interval (If-Match) and stays healthy", async () => {
    const { make, lock } = await setUp()
    // A 3 s lease is renewed every second: the interval itself must write a later updatedAt.
    const lease = await make(3_000).acquire(request)
    const first = (await lock()).updatedAt
    expect(await eventually(async () => (await lock()).updatedAt > first)).toBe(true)
    await lease.read("workspace.json")
    await lease.release()
    expect(await lock()).toBeUndefined()
  })

  it("a lock not yet stale is a conflict, whatever lease the contender uses", async () => {
    const { make, putLock } = await setUp()
    // Renewed "in the future": fresh however slowly this machine runs.
    const updatedAt = new Date(Date.now() + 3_600_000).toISOString()
    await putLock(JSON.stringify({ token: "other-owner", updatedAt, leaseMs: 1_000 }))
    expect(WorkspaceConflictError.is(await rejection(make(1_000).acquire(request)), "ws")).toBe(true)
    expect(WorkspaceConflictError.is(await rejection(make().acquire(request)), "ws")).toBe(true)
  })

  it("takes over a stale lock; the old owner then finds it lost", async () => {
    const { make, lock, putLock } = await setUp()
    const old = await make(3_000).acquire(request)
    // The old owner stalls: its lock reads as last renewed long ago (a changed version, as a
    // real stall followed by a takeover leaves it).
    await putLock(JSON.stringify({ ...(await lock()), updatedAt: "2020-01-01T00:00:00.000Z" }))
    const taker = await make().acquire(request)
    const takerToken = (await lock()).token
    // The old owner learns it at its next renewal (If-Match fails); from then on every
    // operation reports the loss, and release leaves the new owner's lock alone.
    const lost = 'S3 Workspace "ws" lock was lost'
    const learned = () => old.read("workspace.json").then(() => false, (error: Error) => error.message === lost)
    expect(await eventually(learned)).toBe(true)
    expectExact(await rejection(old.read("workspace.json")), Error, lost)
    expectExact(await rejection(old.write("workspace.json", "{}")), Error, lost)
    expectExact(await rejection(old.release()), Error, lost)
    expect((await lock()).token).toBe(takerToken)
    await taker.release()
  })

  it("reports a lock deleted by someone else as lost on release", async () => {
    const { make, s3, bucket } = await setUp()
    const lease = await make().acquire(request)
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: LOCK }))
    expectExact(await rejection(lease.release()), Error, 'S3 Workspace "ws" lock was lost')
  })

  it("checks the lock's contents", async () => {
    const { make, putLock, lock } = await setUp()
    const storage = make()
    await putLock("not json")
    expectExact(await rejection(storage.acquire(request)), Error, 'S3 Workspace "ws" lock is not valid JSON')
    for (const invalid of ['{"token":1,"updatedAt":"2026-01-01T00:00:00.000Z"}', '{"token":"t","updatedAt":"soon"}', "[]", "null"]) {
      await putLock(invalid)
      expectExact(await rejection(storage.acquire(request)), Error, 'S3 Workspace "ws" lock is invalid')
    }
    await putLock(JSON.stringify({ token: "x".repeat(5000), updatedAt: "2026-01-01T00:00:00.000Z" }))
    expectExact(await rejection(storage.acquire(request)), RangeError, "S3 Workspace lock exceeded 4096 bytes")
    await putLock('{"token":"typescript-sdk-owner","updatedAt":"2020-01-01T00:00:00.000Z"}')
    const lease = await storage.acquire(request)
    expect((await lock()).token).not.toBe("typescript-sdk-owner")
    await lease.release()
  })

  it("wraps provider failures with the documented lock messages and keeps the cause", async () => {
    const s3 = moto.client()
    let fail: ((input: any, name: string) => boolean) | undefined
    let strip: string | undefined
    s3.middlewareStack.add(
      (next, context) => async (args: any) => {
        if (fail?.(args.input, context.commandName!)) throw Object.assign(new Error("denied"), { name: "AccessDenied" })
        const result: any = await next(args)
        if (strip !== undefined && result.output) delete result.output[strip]
        return result
      },
      { step: "initialize", name: "faults" },
    )
    const { make, putLock } = await setUp({ client: s3 })
    const storage = make()
    const cases: [typeof fail, string][] = [
      [(_i, name) => name === "PutObjectCommand", 'S3 Workspace "ws" lock acquisition failed'],
      [(_i, name) => name === "GetObjectCommand", 'S3 Workspace "ws" could not inspect its lock'],
      [(input, name) => name === "PutObjectCommand" && input.IfMatch !== undefined, 'S3 Workspace "ws" could not replace its stale lock'],
    ]
    await putLock('{"token":"old","updatedAt":"2020-01-01T00:00:00.000Z"}')
    for (const [rule, message] of cases) {
      fail = rule
      const error = await rejection(storage.acquire(request))
      expectExact(error, Error, message)
      expect(error.cause.name).toBe("AccessDenied")
    }
    fail = undefined
    strip = "Body"
    expectExact(await rejection(storage.acquire(request)), Error, "S3 Workspace lock did not contain a streaming body")
    strip = "ETag"
    expectExact(await rejection(storage.acquire(request)), Error, "S3 Workspace lock operation did not return an ETag")
  })

  it("16 contenders: exactly one holder", async () => {
    const { make } = await setUp()
    const storage = make()
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => storage.acquire(request)))
    const holders = outcomes.filter((o) => o.status === "fulfilled")
    expect(holders).toHaveLength(1)
    for (const o of outcomes) if (o.status === "rejected") expect(WorkspaceConflictError.is(o.reason, "ws")).toBe(true)
    await (holders[0] as PromiseFulfilledResult<any>).value.release()
  })
})
