// The S3 Workspace storage as a WorkspaceStorageAdapter (name "s3") over the one store in
// crates/aml-s3 (src/workspace/s3.rs): with the native client for `s3Workspace({ config })`,
// or with an application's S3Client behind the port of client-storage.js. The lock, layout,
// conditions and messages are the Rust store's; this file maps config, bodies and errors.

import { WorkspaceConflictError } from "../../errors/errors.js"
import {
  s3BodyClose,
  s3BodyNext,
  s3LeaseClose,
  s3LeaseDelete,
  s3LeaseList,
  s3LeaseRead,
  s3LeaseRefresh,
  s3LeaseRelease,
  s3LeaseWrite,
  s3StorageAcquire,
  s3StorageCreate,
} from "../../core/native.js"

const NATIVE_CONFIG = ["region", "endpoint", "credentials", "forcePathStyle"]

function unsupported(key) {
  return new TypeError(`S3 Workspace config option "${key}" is not supported without an S3Client; pass client instead`)
}

/** The part of an S3ClientConfig the native client maps; anything else is refused by name. */
export function nativeS3Config(config = {}) {
  for (const key of Object.keys(config)) if (!NATIVE_CONFIG.includes(key)) throw unsupported(key)
  const { region, endpoint, credentials, forcePathStyle } = config
  if (region !== undefined && (typeof region !== "string" || region === "")) throw unsupported("region")
  const url = endpoint instanceof URL ? endpoint.href : endpoint
  if (url !== undefined && (typeof url !== "string" || !/^https?:\/\//.test(url))) throw unsupported("endpoint")
  if (credentials !== undefined) {
    const valid =
      typeof credentials === "object" &&
      credentials !== null &&
      typeof credentials.accessKeyId === "string" &&
      typeof credentials.secretAccessKey === "string" &&
      (credentials.sessionToken === undefined || typeof credentials.sessionToken === "string")
    if (!valid) throw unsupported("credentials")
  }
  if (forcePathStyle !== undefined && typeof forcePathStyle !== "boolean") throw unsupported("forcePathStyle")
  return { region, endpoint: url, credentials, forcePathStyle }
}

// `hostError(reference)`: the value an application's client threw (client-storage.js).
function rebuild(json, hostError) {
  const data = JSON.parse(json)
  if (data.class === "Conflict") return new WorkspaceConflictError(data.workspaceId)
  const host = (reference) => hostError?.(reference) ?? new Error(data.message)
  if (data.class === "Host") return host(data.reference)
  const Class = data.class === "RangeError" ? RangeError : data.class === "TypeError" ? TypeError : Error
  const cause = data.hostCause !== undefined ? host(data.hostCause) : data.cause ? new Error(data.cause) : undefined
  const error = new Class(data.message, cause === undefined ? undefined : { cause })
  if (data.name !== undefined) error.name = data.name
  return error
}

async function settleWith(promise, hostError) {
  const outcome = await promise
  if (!outcome.ok) throw rebuild(outcome.error, hostError)
  return outcome
}

async function* body(handle, settle) {
  try {
    for (;;) {
      const { chunk } = await settle(s3BodyNext(handle))
      if (chunk === undefined || chunk === null) return
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    }
  } finally {
    s3BodyClose(handle)
  }
}

async function bytes(value) {
  if (typeof value === "string") return Buffer.from(value, "utf8")
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  const chunks = []
  for await (const chunk of value) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks)
}

// A released lease keeps its handle (later calls report the release) until collected.
const collected = new FinalizationRegistry((handle) => s3LeaseClose(handle))

function lease(handle, meta, settle) {
  let released
  return Object.freeze({
    handle: meta,
    async read(path) {
      const outcome = await settle(s3LeaseRead(handle, path))
      if (outcome.handle === undefined || outcome.handle === null) return undefined
      return Object.freeze({ body: body(outcome.handle, settle), version: Object.freeze({ value: outcome.version }) })
    },
    async write(path, value, options = {}) {
      const { condition, contentType } = options
      const json =
        condition?.kind === "absent"
          ? JSON.stringify({ kind: "absent" })
          : condition?.kind === "version"
            ? JSON.stringify({ kind: "version", version: condition.version.value })
            : undefined
      const buffer = await bytes(value)
      const outcome = await settle(s3LeaseWrite(handle, path, buffer, json, contentType))
      return Object.freeze({ value: outcome.version })
    },
    async list(prefix) {
      const { paths } = await settle(s3LeaseList(handle, prefix))
      return Object.freeze(paths.map((path) => Object.freeze({ path })))
    },
    async delete(paths) {
      await settle(s3LeaseDelete(handle, [...paths]))
    },
    release() {
      released ??= settle(s3LeaseRelease(handle)).then(() => undefined)
      return released
    },
    // Tests only: one renewal now.
    refreshForTest: () => {
      return settle(s3LeaseRefresh(handle)).then(() => undefined)
    },
  })
}

/**
 * A WorkspaceStorageAdapter over one Rust store: `create()` makes the storage handle on first
 * acquisition, `prepare()` (optional) runs before each, and `hostError(reference)` returns a
 * value the client threw.
 */
export function createS3LeaseStorage({ bucket, create, hostError, prefix, prepare }) {
  let storage
  const meta = Object.freeze({ bucket, kind: "s3-workspace", prefix })
  const settle = (promise) => settleWith(promise, hostError)
  return Object.freeze({
    name: "s3",
    async acquire(request) {
      const { id, lock, signal } = request
      signal?.throwIfAborted()
      await prepare?.()
      // Created lazily: the factory performs no I/O and builds no client.
      storage ??= create()
      const { handle } = await settle(s3StorageAcquire(storage, id, lock !== false))
      const acquired = lease(handle, meta, settle)
      collected.register(acquired, handle)
      if (signal?.aborted) {
        await acquired.release().catch(() => {})
        throw signal.reason
      }
      return acquired
    },
  })
}

/**
 * A WorkspaceStorageAdapter over the native client for `{bucket, prefix, config}`;
 * `lockLeaseMs` (validated, optional) shortens the lock's lease (crates/aml-s3/src/lease_time.rs).
 */
export function createS3NativeStorage({ bucket, prefix, config, lockLeaseMs }) {
  const mapped = nativeS3Config(config)
  const create = () => s3StorageCreate(JSON.stringify({ bucket, lockLeaseMs, prefix, ...mapped }))
  return createS3LeaseStorage({ bucket, create, prefix })
}
