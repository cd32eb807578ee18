// The native client path (`config`, crates/aml-s3 through src/workspace/s3.rs) against moto.

import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3"
import { WorkspaceConflictError } from "@aml-jsx/sdk"
import { afterAll, beforeAll, describe, expect } from "vitest"

// @ts-expect-error internal module without declarations
import { s3LiveHandles } from "../lib/core/native.js"
// @ts-expect-error internal module without declarations
import { createS3NativeStorage, nativeS3Config } from "../lib/workspace/s3/native-storage.js"
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

const request = (id = "ws", lock = true) => ({ evaluationId: "e", id, lock, signal: new AbortController().signal })

async function setUp() {
  const bucket = await moto.bucket()
  const config = {
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    endpoint: moto.endpoint,
    forcePathStyle: true,
  }
  return { bucket, s3: moto.client(), storage: createS3NativeStorage({ bucket, config, prefix: "aml/workspaces" }) }
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks).toString("utf8")
}

describe("S3 Workspace storage over the native client (moto)", () => {
  it("round-trips objects and shares the layout with the AWS SDK", async () => {
    const { bucket, s3, storage } = await setUp()
    const lease = await storage.acquire(request("review 42"))
    expect(lease.handle).toEqual({ bucket, kind: "s3-workspace", prefix: "aml/workspaces" })
    expect(await lease.read("workspace.json")).toBeUndefined()
    const version = await lease.write("workspace.json", '{"version":1}', { contentType: "application/json" })
    const big = Buffer.alloc(3 * 1024 * 1024, 7)
    await lease.write("revisions/r.tar.gz", big)
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "aml/workspaces/review%2042/workspace.json" }))
    expect(out.ETag).toBe(version.value)
    expect(await out.Body!.transformToString()).toBe('{"version":1}')
    const object = await lease.read("revisions/r.tar.gz")
    expect(Buffer.from(await text(object.body), "utf8").length).toBe(big.length)
    expect((await lease.list("")).map((e: any) => e.path)).toEqual(["lock.json", "revisions/r.tar.gz", "workspace.json"])
    await lease.delete(["revisions/r.tar.gz"])
    expect((await lease.list("revisions/")).length).toBe(0)
    await lease.release()
    expect(s3LiveHandles()).toBe(0)
  })

  it("conditions, conflicts and lock messages keep their classes", async () => {
    const { bucket, s3, storage } = await setUp()
    const lease = await storage.acquire(request())
    const conflict = await rejection(storage.acquire(request()))
    expectExact(conflict, WorkspaceConflictError, 'Workspace "ws" already has an active writer')
    expect(WorkspaceConflictError.is(conflict, "ws")).toBe(true)
    const first = await lease.write("workspace.json", "1", { condition: { kind: "absent" } })
    const absent = await rejection(lease.write("workspace.json", "2", { condition: { kind: "absent" } }))
    expect(absent.name).toBe("PreconditionFailed")
    await lease.write("workspace.json", "2", { condition: { kind: "version", version: first } })
    expect((await rejection(lease.write("workspace.json", "3", { condition: { kind: "version", version: first } }))).name).toBe("PreconditionFailed")
    expectExact(await rejection(lease.read("../x")), Error, 'S3 Workspace storage path "../x" is invalid')
    // Someone replaces the lock: the next renewal loses it, and so does release.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "aml/workspaces/ws/lock.json", Body: '{"token":"other","updatedAt":"2026-01-01T00:00:00.000Z"}' }))
    expectExact(await rejection(lease.refreshForTest()), Error, 'S3 Workspace "ws" lock was lost')
    expectExact(await rejection(lease.read("workspace.json")), Error, 'S3 Workspace "ws" lock was lost')
    expectExact(await rejection(lease.release()), Error, 'S3 Workspace "ws" lock was lost')
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "aml/workspaces/ws/lock.json", Body: "x".repeat(5000) }))
    expectExact(await rejection(storage.acquire(request())), RangeError, "S3 Workspace lock exceeded 4096 bytes")
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "aml/workspaces/ws/lock.json", Body: "{" }))
    expectExact(await rejection(storage.acquire(request())), Error, 'S3 Workspace "ws" lock is not valid JSON')
    expect(s3LiveHandles()).toBe(0)
  })

  it("reports a missing bucket as a lock acquisition failure with its cause", async () => {
    const { storage: _unused } = await setUp()
    const storage = createS3NativeStorage({
      bucket: "no-such-bucket",
      config: { credentials: { accessKeyId: "t", secretAccessKey: "t" }, endpoint: moto.endpoint, forcePathStyle: true },
      prefix: "aml/workspaces",
    })
    const error = await rejection(storage.acquire(request()))
    expectExact(error, Error, 'S3 Workspace "ws" lock acquisition failed')
    expect(error.cause.message).toContain("PutObject")
  })

  it("maps the supported config members and refuses the rest by name", () => {
    expect(nativeS3Config({ region: "eu-west-1", endpoint: new URL("http://127.0.0.1:9000"), forcePathStyle: true })).toEqual({
      credentials: undefined,
      endpoint: "http://127.0.0.1:9000/",
      forcePathStyle: true,
      region: "eu-west-1",
    })
    const message = (key: string) => `S3 Workspace config option "${key}" is not supported without an S3Client; pass client instead`
    expectExact(thrown(() => nativeS3Config({ maxAttempts: 3 })), TypeError, message("maxAttempts"))
    expectExact(thrown(() => nativeS3Config({ credentials: async () => ({}) })), TypeError, message("credentials"))
    expectExact(thrown(() => nativeS3Config({ endpoint: "ftp://x" })), TypeError, message("endpoint"))
  })
})

function thrown(run: () => unknown): any {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}
