// The S3 Workspace storage for an application-supplied AWS SDK v3 S3Client (BW-3, WP-2
// adapter). Commands come from the application's own @aws-sdk/client-s3 (an optional peer
// dependency, resolved from this package's location like any peer), so a client or mock that
// checks `instanceof` on its commands sees its own classes. The native client of
// `s3Workspace({ config })` lives in crates/aml-s3; both share one protocol and one layout.

import { S3ClientLock } from "./client-lock.js"
import { invalidPath, isListPrefix, isStoragePath, storageSegment } from "./keys.js"

let sdkModule

/** The application's @aws-sdk/client-s3, loaded on first use. */
export function loadS3Sdk() {
  sdkModule ??= import("@aws-sdk/client-s3").catch((cause) => {
    sdkModule = undefined
    throw new Error("S3 Workspace client requires the @aws-sdk/client-s3 package", { cause })
  })
  return sdkModule
}

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

// The four operations as the lock and the lease use them, over SDK commands.
function sdkOperations(client, sdk, bucket) {
  return {
    isPrecondition,
    async get(key, abortSignal) {
      try {
        return await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },
    async put(key, body, extra, abortSignal) {
      const input = { Bucket: bucket, Key: key, Body: body, ContentType: "application/json", ...extra }
      const output = await client.send(new sdk.PutObjectCommand(input), { abortSignal })
      return output?.ETag
    },
    async delete(key) {
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }))
    },
    async list(prefix) {
      const keys = []
      let ContinuationToken
      do {
        const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }))
        for (const entry of page?.Contents ?? []) if (typeof entry.Key === "string") keys.push(entry.Key)
        ContinuationToken = page?.IsTruncated ? page.NextContinuationToken : undefined
      } while (ContinuationToken !== undefined)
      return keys
    },
  }
}

async function collect(body) {
  if (typeof body === "string") return Buffer.from(body, "utf8")
  if (body instanceof Uint8Array) return body
  const chunks = []
  for await (const chunk of body) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks)
}

function lease({ ops, bucket, prefix, id, root, lock }) {
  let released
  const usable = () => {
    if (released !== undefined) throw new Error(`S3 Workspace "${id}" storage lease was released`)
    lock?.check()
  }
  const key = (path) => {
    if (!isStoragePath(path)) throw invalidPath(path)
    return `${root}/${path}`
  }
  const object = (path, what) => new Error(`S3 Workspace "${id}" object "${path}" ${what}`)
  return Object.freeze({
    handle: Object.freeze({ bucket, kind: "s3-workspace", prefix }),
    async read(path) {
      const target = key(path)
      usable()
      const response = await ops.get(target)
      if (response === undefined) return undefined
      const body = response.Body
      if (body === null || typeof body !== "object" || typeof body[Symbol.asyncIterator] !== "function") {
        throw object(path, "did not return a streaming body")
      }
      if (typeof response.ETag !== "string" || response.ETag === "") {
        body.destroy?.()
        throw object(path, "did not return an ETag")
      }
      return Object.freeze({ body, version: Object.freeze({ value: response.ETag }) })
    },
    async write(path, body, options = {}) {
      const target = key(path)
      usable()
      const condition = options.condition
      const extra = { ContentType: options.contentType ?? "application/octet-stream" }
      if (condition?.kind === "absent") extra.IfNoneMatch = "*"
      else if (condition?.kind === "version") extra.IfMatch = condition.version.value
      // Bodies are sent with a known length: SDK streaming uploads of unknown length need
      // chunked signing that S3-compatible services implement unevenly.
      const etag = await ops.put(target, await collect(body), extra)
      if (typeof etag !== "string" || etag === "") throw object(path, "did not return an ETag")
      return Object.freeze({ value: etag })
    },
    async list(listPrefix) {
      if (!isListPrefix(listPrefix)) throw invalidPath(listPrefix)
      usable()
      const keys = await ops.list(`${root}/${listPrefix}`)
      return Object.freeze(keys.map((entry) => Object.freeze({ path: entry.slice(root.length + 1) })))
    },
    async delete(paths) {
      const targets = paths.map(key)
      usable()
      for (const target of targets) await ops.delete(target)
    },
    release() {
      released ??= lock === undefined ? Promise.resolve() : lock.release()
      return released
    },
  })
}

/**
 * A WorkspaceStorageAdapter (name "s3") over `client`. `testing` replaces the lock clock and
 * timings (tests only).
 */
export function createS3ClientStorage({ bucket, prefix, client, testing }) {
  return Object.freeze({
    name: "s3",
    async acquire(request) {
      const { id, lock, signal } = request
      signal?.throwIfAborted()
      const root = `${prefix}/${storageSegment(id)}`
      const ops = sdkOperations(client, await loadS3Sdk(), bucket)
      const held = lock === false ? undefined : await S3ClientLock.acquire(ops, id, `${root}/lock.json`, testing)
      if (signal?.aborted) {
        // Acquired while the evaluation gave up: give the lease back, report the abort.
        await held?.release().catch(() => {})
        throw signal.reason
      }
      return lease({ ops, bucket, prefix, id, root, lock: held })
    },
  })
}
