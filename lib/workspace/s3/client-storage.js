// The S3 Workspace storage for an application-supplied AWS SDK v3 S3Client (BW-3, WP-2
// adapter). This file is only the storage *port* (src/workspace/s3_port.rs): get, put with
// If-None-Match / If-Match, delete, list and body reads as SDK commands. The lock.json lease,
// the key layout, the path checks and every message are crates/aml-s3's, the same code the
// native client of `s3Workspace({ config })` runs (lib/workspace/s3/native-storage.js).
// Commands come from the application's own @aws-sdk/client-s3 (an optional peer dependency,
// resolved from this package's location like any peer), so a client or mock that checks
// `instanceof` on its commands sees its own classes.

import { s3StorageCreateForClient } from "../../core/native.js"
import { createS3LeaseStorage } from "./native-storage.js"
import { optionalPeer } from "../../core/optional-peer.js"

/** The application's @aws-sdk/client-s3, loaded on first use. */
export const loadS3Sdk = optionalPeer(
  () => import("@aws-sdk/client-s3"),
  (cause) => new Error("S3 Workspace client requires the @aws-sdk/client-s3 package", { cause }),
)

function status(error) {
  return error?.$metadata?.httpStatusCode
}

function isNotFound(error) {
  return error?.name === "NoSuchKey" || error?.name === "NotFound" || (status(error) === 404 && error?.name !== "NoSuchBucket")
}

// 412 is a failed condition; S3 also answers 409 ConditionalRequestConflict to a conditional
// write racing another, which means the same: someone else's write won.
function isPrecondition(error) {
  return error?.name === "PreconditionFailed" || status(error) === 412 || error?.name === "ConditionalRequestConflict"
}

function isAsyncIterable(value) {
  return value !== null && typeof value === "object" && typeof value[Symbol.asyncIterator] === "function"
}

function bytes(chunk) {
  if (typeof chunk === "string") return Buffer.from(chunk, "utf8")
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
}

// Values the client threw, by number, until the failure that carries them reaches the
// application (`take`). Failures nobody reports (a renewal's) would pile up: keep the newest.
const KEPT_ERRORS = 64

/** The port over `client` for bucket `bucket`: `call(op, key, body, extra)` never rejects. */
function sdkPort(client, bucket) {
  const errors = new Map()
  const bodies = new Map()
  let nextError = 0
  let nextBody = 0
  const keep = (error) => {
    do nextError = (nextError + 1) >>> 0
    while (nextError === 0)
    errors.set(nextError, error)
    if (errors.size > KEPT_ERRORS) errors.delete(errors.keys().next().value)
    return nextError
  }
  const closeBody = (reference) => {
    const body = bodies.get(reference)
    bodies.delete(reference)
    void body?.iterator.return?.().catch(() => {})
    body?.source.destroy?.()
  }
  const ops = [
    async function get(key) {
      const sdk = await loadS3Sdk()
      let response
      try {
        response = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }))
      } catch (error) {
        if (isNotFound(error)) return { found: false, ok: true }
        throw error
      }
      const etag = typeof response?.ETag === "string" && response.ETag !== "" ? response.ETag : undefined
      const source = response?.Body
      if (!isAsyncIterable(source)) return { etag, found: true, ok: true }
      do nextBody = (nextBody + 1) >>> 0
      while (nextBody === 0 || bodies.has(nextBody))
      bodies.set(nextBody, { iterator: source[Symbol.asyncIterator](), source })
      return { body: nextBody, etag, found: true, ok: true }
    },
    async function put(key, body, extra) {
      const sdk = await loadS3Sdk()
      const { condition, contentType } = JSON.parse(extra)
      const input = { Body: body, Bucket: bucket, ContentType: contentType ?? "application/octet-stream", Key: key }
      if (condition?.ifNoneMatch !== undefined) input.IfNoneMatch = condition.ifNoneMatch
      if (condition?.ifMatch !== undefined) input.IfMatch = condition.ifMatch
      const output = await client.send(new sdk.PutObjectCommand(input))
      const etag = output?.ETag
      return typeof etag === "string" && etag !== "" ? { etag, ok: true } : { ok: true }
    },
    async function remove(key) {
      const sdk = await loadS3Sdk()
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }))
      return { ok: true }
    },
    async function list(prefix) {
      const sdk = await loadS3Sdk()
      const keys = []
      let ContinuationToken
      do {
        const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, ContinuationToken, Prefix: prefix }))
        for (const entry of page?.Contents ?? []) if (typeof entry.Key === "string") keys.push(entry.Key)
        ContinuationToken = page?.IsTruncated ? page.NextContinuationToken : undefined
      } while (ContinuationToken !== undefined)
      return { keys, ok: true }
    },
    async function next(_key, _body, extra) {
      const reference = Number(extra)
      const body = bodies.get(reference)
      if (body === undefined) return { ok: true }
      try {
        const { done, value } = await body.iterator.next()
        if (done) {
          bodies.delete(reference)
          return { ok: true }
        }
        return { chunk: bytes(value), ok: true }
      } catch (error) {
        closeBody(reference)
        throw error
      }
    },
    async function close(_key, _body, extra) {
      closeBody(Number(extra))
      return { ok: true }
    },
  ]
  return {
    async call(op, key, body, extra) {
      try {
        return await ops[op](key, body, extra)
      } catch (error) {
        const message = String(error?.message ?? error)
        if (isPrecondition(error)) return { message, ok: false, precondition: true }
        return { error: keep(error), message, ok: false }
      }
    },
    /** The value kept under `reference`, once. */
    take(reference) {
      const error = errors.get(reference)
      errors.delete(reference)
      return error
    },
  }
}

/**
 * A WorkspaceStorageAdapter (name "s3") over `client`; `lockLeaseMs` (validated, optional)
 * shortens the lock's lease. The timings, defaults included, are the Rust store's
 * (crates/aml-s3/src/lease_time.rs).
 */
export function createS3ClientStorage({ bucket, prefix, client, lockLeaseMs }) {
  const port = sdkPort(client, bucket)
  const create = () => s3StorageCreateForClient(JSON.stringify({ bucket, lockLeaseMs, prefix }), port.call)
  return createS3LeaseStorage({ bucket, create, hostError: port.take, prefix, prepare: loadS3Sdk })
}
