// The JS half of the storage adapter dispatcher (src/workspace/js_storage.rs): the Rust
// persistence engine drives a JS `WorkspaceStorageLease` by a small integer reference.
//
// Protocol (Rust → JS, one weak threadsafe function per Node environment):
//   dispatch(0 read,    lease, path, null, maxBytes)           → { ok, found, body, version }
//   dispatch(1 write,   lease, path, body, optionsJson)        → { ok, version }
//   dispatch(2 list,    lease, prefix, null, "")               → { ok, paths }
//   dispatch(3 delete,  lease, "", null, pathsJson)            → { ok }
//   dispatch(4 release, lease, "", null, "")                   → { ok }
// `dispatch` never throws and never rejects: a value the adapter throws is kept under a
// number (`{ ok: false, error }`) until the persistence call that caused it settles, then
// rethrown as is (lib/workspace/errors.js). Reads are collected up to one byte past the
// engine's bound, so an oversized object is never buffered whole.

import { workspaceStorageDispatcherInstall, workspaceStorageDispatcherInstalled } from "../core/native.js"

const leases = new Map()
let nextLease = 0
let nextError = 0

/** Lends `lease` (of adapter `name`) to the engine; returns its reference. */
export function lendLease(lease, name) {
  if (!workspaceStorageDispatcherInstalled()) workspaceStorageDispatcherInstall(dispatch)
  do nextLease = (nextLease + 1) >>> 0
  while (nextLease === 0 || leases.has(nextLease))
  leases.set(nextLease, { errors: new Map(), lease, name })
  return nextLease
}

/** The values the adapter threw during the last call; clears them. */
export function takeHostErrors(reference) {
  const entry = leases.get(reference)
  if (entry === undefined) return new Map()
  const errors = entry.errors
  entry.errors = new Map()
  return errors
}

export function forgetLease(reference) {
  leases.delete(reference)
}

const OPS = [read, write, list, remove, release]

async function dispatch(op, reference, path, body, extra) {
  const entry = leases.get(reference)
  if (entry === undefined) return { ok: false }
  try {
    return await OPS[op](entry, path, body, extra)
  } catch (error) {
    do nextError = (nextError + 1) >>> 0
    while (nextError === 0)
    entry.errors.set(nextError, error)
    return { error: nextError, ok: false }
  }
}

function invalid(entry, what, path) {
  return new TypeError(`Workspace storage "${entry.name}" returned an invalid ${what} for "${path}"`)
}

function chunkBytes(entry, chunk, path) {
  if (typeof chunk === "string") return Buffer.from(chunk, "utf8")
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  throw invalid(entry, "object body", path)
}

async function read(entry, path, _body, extra) {
  const object = await entry.lease.read(path)
  if (object === undefined) return { found: false, ok: true }
  if (typeof object !== "object" || object === null) throw invalid(entry, "object", path)
  const { body, version } = object
  if (typeof version !== "object" || version === null || typeof version.value !== "string") {
    throw invalid(entry, "object version", path)
  }
  const limit = Number(extra)
  const chunks = []
  let size = 0
  if (typeof body === "string" || body instanceof Uint8Array) {
    chunks.push(chunkBytes(entry, body, path))
  } else if (body !== null && typeof body === "object" && typeof body[Symbol.asyncIterator] === "function") {
    for await (const chunk of body) {
      const bytes = chunkBytes(entry, chunk, path)
      chunks.push(bytes)
      size += bytes.length
      if (size > limit) break
    }
  } else {
    throw invalid(entry, "object body", path)
  }
  return { body: Buffer.concat(chunks), found: true, ok: true, version: version.value }
}

async function write(entry, path, body, extra) {
  const { condition, contentLength, contentType } = JSON.parse(extra)
  const options = { contentLength }
  if (condition !== null) options.condition = condition
  if (contentType !== null && contentType !== undefined) options.contentType = contentType
  const version = await entry.lease.write(path, new Uint8Array(body.buffer, body.byteOffset, body.byteLength), options)
  if (typeof version !== "object" || version === null || typeof version.value !== "string") {
    throw invalid(entry, "version", path)
  }
  return { ok: true, version: version.value }
}

async function list(entry, prefix) {
  const listed = await entry.lease.list(prefix)
  if (!Array.isArray(listed)) throw invalid(entry, "listing", prefix)
  const paths = listed.map((item) => {
    if (typeof item !== "object" || item === null || typeof item.path !== "string") {
      throw invalid(entry, "listing", prefix)
    }
    return item.path
  })
  return { ok: true, paths }
}

async function remove(entry, _path, _body, extra) {
  await entry.lease.delete(JSON.parse(extra))
  return { ok: true }
}

async function release(entry) {
  await entry.lease.release()
  return { ok: true }
}
