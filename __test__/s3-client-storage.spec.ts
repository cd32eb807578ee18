// The application-supplied S3Client path against a real S3 server (moto).

import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3"
import { afterAll, beforeAll, describe, expect } from "vitest"

// @ts-expect-error internal module without declarations
import { s3LiveHandles } from "../lib/core/native.js"
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

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks).toString("utf8")
}

async function setUp(client?: S3Client) {
  const bucket = await moto.bucket()
  const s3 = client ?? moto.client()
  const storage = createS3ClientStorage({ bucket, client: s3, prefix: "aml/workspaces" })
  return { bucket, s3, storage }
}

const request = (id: string, lock = true) => ({ evaluationId: "e", id, lock, signal: new AbortController().signal })

describe("S3 Workspace storage over an AWS SDK S3Client (moto)", () => {
  it("reads, writes, lists and deletes under <prefix>/<segment(id)>", async () => {
    const { bucket, s3, storage } = await setUp()
    expect(storage.name).toBe("s3")
    const lease = await storage.acquire(request("review 42"))
    expect(lease.handle).toEqual({ bucket, kind: "s3-workspace", prefix: "aml/workspaces" })
    expect(await lease.read("workspace.json")).toBeUndefined()
    const version = await lease.write("revisions/r1/files/a.txt", "alpha", { contentType: "text/plain" })
    await lease.write("revisions/r1/manifest.json", new TextEncoder().encode("{}"))
    await lease.write("revisions/r10.tar.gz", (async function* () { yield new Uint8Array([1, 2]); yield new Uint8Array([3]) })())
    const object = await lease.read("revisions/r1/files/a.txt")
    expect(object.version).toEqual(version)
    expect(await text(object.body)).toBe("alpha")
    expect((await lease.list("revisions/r1/")).map((e: any) => e.path)).toEqual(["revisions/r1/files/a.txt", "revisions/r1/manifest.json"])
    expect(await lease.list("revisions/r1")).toHaveLength(3)
    const keys = await s3.send(new ListObjectsV2Command({ Bucket: bucket }))
    expect(keys.Contents?.map((c) => c.Key)).toContain("aml/workspaces/review%2042/lock.json")
    await lease.delete(["revisions/r1/files/a.txt", "revisions/r1/manifest.json", "never-there"])
    expect((await lease.list("")).map((e: any) => e.path)).toEqual(["lock.json", "revisions/r10.tar.gz"])
    await lease.release()
    expectExact(await rejection(lease.read("x")), Error, 'S3 Workspace "review 42" storage lease was released')
  })

  it("lists across ListObjectsV2 pages (continuation tokens)", async () => {
    // Small pages instead of 1000+ objects: the same continuation protocol, fewer requests.
    const s3 = moto.client()
    let pages = 0
    s3.middlewareStack.add(
      (next) => async (args: any) => {
        if (args.input.Prefix !== undefined) {
          args.input.MaxKeys = 2
          pages++
        }
        return next(args)
      },
      { step: "initialize", name: "smallPages" },
    )
    const { storage } = await setUp(s3)
    const lease = await storage.acquire(request("ws", false))
    const paths = Array.from({ length: 7 }, (_, i) => `revisions/r/files/${i}`)
    await Promise.all(paths.map((p) => lease.write(p, "x")))
    expect((await lease.list("revisions/r/")).map((e: any) => e.path)).toEqual(paths)
    expect(pages).toBe(4)
  })

  it("maps absent and version conditions to If-None-Match: * and If-Match", async () => {
    const { storage } = await setUp()
    const lease = await storage.acquire(request("ws", false))
    const first = await lease.write("workspace.json", "1", { condition: { kind: "absent" } })
    const absent = await rejection(lease.write("workspace.json", "2", { condition: { kind: "absent" } }))
    expect(absent.name).toBe("PreconditionFailed")
    const second = await lease.write("workspace.json", "2", { condition: { kind: "version", version: first } })
    const stale = await rejection(lease.write("workspace.json", "3", { condition: { kind: "version", version: first } }))
    expect(stale.name).toBe("PreconditionFailed")
    const current = await lease.read("workspace.json")
    expect(current.version).toEqual(second)
    expect(await text(current.body)).toBe("2")
  })

  it("32 concurrent create-only writes to one key: exactly one winner", async () => {
    const { storage } = await setUp()
    const lease = await storage.acquire(request("ws", false))
    const outcomes = await Promise.allSettled(
      Array.from({ length: 32 }, (_, i) => lease.write("race", `writer-${i}`, { condition: { kind: "absent" } })),
    )
    const winners = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []))
    expect(winners).toHaveLength(1)
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason.name).toBe("PreconditionFailed")
    expect(await text((await lease.read("race")).body)).toBe(`writer-${winners[0]}`)
  })

  it("drives the application's own command classes (instanceof holds)", async () => {
    const real = moto.client()
    const seen: string[] = []
    const strict = {
      send(command: unknown, options?: unknown) {
        const known = [GetObjectCommand, PutObjectCommand, DeleteObjectCommand, ListObjectsV2Command]
        const type = known.find((k) => command instanceof k)
        if (type === undefined) throw new TypeError("not an @aws-sdk/client-s3 command of this installation")
        seen.push(type.name)
        return real.send(command as any, options as any)
      },
    }
    const { storage } = await setUp(strict as unknown as S3Client)
    const lease = await storage.acquire(request("ws"))
    await lease.write("a", "1")
    await lease.read("a")
    await lease.list("")
    await lease.delete(["a"])
    await lease.release()
    expect(new Set(seen)).toEqual(new Set(["PutObjectCommand", "GetObjectCommand", "ListObjectsV2Command", "DeleteObjectCommand"]))
  })

  it("rejects invalid storage paths with the documented message", async () => {
    const { storage } = await setUp()
    const lease = await storage.acquire(request("ws", false))
    for (const path of ["", "/abs", "a/../b", "a//b", "a\\b", "..", "a/", "a\nb"]) {
      const message = `S3 Workspace storage path "${path}" is invalid`
      expectExact(await rejection(lease.read(path)), Error, message)
      expectExact(await rejection(lease.write(path, "x")), Error, message)
      expectExact(await rejection(lease.delete([path])), Error, message)
    }
    expectExact(await rejection(lease.list("../")), Error, 'S3 Workspace storage path "../" is invalid')
  })

  it("reports objects without a streaming body or an ETag", async () => {
    const s3 = moto.client()
    let strip: "Body" | "ETag" | undefined
    s3.middlewareStack.add(
      (next) => async (args) => {
        const result: any = await next(args)
        if (strip !== undefined && result.output) delete result.output[strip]
        return result
      },
      { step: "initialize", name: "stripReply" },
    )
    const { storage } = await setUp(s3)
    const lease = await storage.acquire(request("ws", false))
    await lease.write("workspace.json", "{}")
    strip = "Body"
    expectExact(await rejection(lease.read("workspace.json")), Error, 'S3 Workspace "ws" object "workspace.json" did not return a streaming body')
    strip = "ETag"
    expectExact(await rejection(lease.read("workspace.json")), Error, 'S3 Workspace "ws" object "workspace.json" did not return an ETag')
    expectExact(await rejection(lease.write("workspace.json", "{}")), Error, 'S3 Workspace "ws" object "workspace.json" did not return an ETag')
  })

  it("is the one Rust store (lease, lock, layout) behind the application's client", async () => {
    // The lease and its lock.json live in crates/aml-s3; the client is only the storage port.
    const { storage } = await setUp()
    const before = s3LiveHandles()
    const lease = await storage.acquire(request("ws"))
    expect(s3LiveHandles()).toBe(before + 1)
    await lease.release()
    expect(s3LiveHandles()).toBe(before)
  })

  it("rejects a pre-aborted acquisition with the signal's reason", async () => {
    const { storage } = await setUp()
    const controller = new AbortController()
    const reason = new Error("stop")
    controller.abort(reason)
    expect(await rejection(storage.acquire({ evaluationId: "e", id: "ws", lock: true, signal: controller.signal }))).toBe(reason)
  })
})
