// The lock.json lease for an application-supplied S3Client: the protocol of
// crates/aml-s3/src/lock.rs (which serves the native client), driven through AWS SDK
// commands. {token, updatedAt} is created with If-None-Match: *, refreshed with If-Match every
// 5 minutes, taken over with If-Match once older than 20 minutes, read with a 4 KiB limit, and
// deleted on release only while its token is still ours.

import { randomUUID } from "node:crypto"

import { WorkspaceConflictError } from "../../errors/errors.js"

export const LOCK_TIMINGS = Object.freeze({ refreshMs: 5 * 60_000, staleMs: 20 * 60_000 })
const MAX_LOCK_BYTES = 4096
const ACQUIRE_ATTEMPTS = 3
const NO_ETAG = "S3 Workspace lock operation did not return an ETag"

export const systemClock = Object.freeze({ now: () => Date.now() })

function lockBody(token, now) {
  return JSON.stringify({ token, updatedAt: new Date(now).toISOString() })
}

function isAsyncIterable(value) {
  return value !== null && typeof value === "object" && typeof value[Symbol.asyncIterator] === "function"
}

// {token: non-empty string, updatedAt: a date string} or undefined.
function parseRecord(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const { token, updatedAt } = value
  if (typeof token !== "string" || token.length === 0 || typeof updatedAt !== "string") return undefined
  const time = Date.parse(updatedAt)
  return Number.isNaN(time) ? undefined : { token, time }
}

// Missing → undefined; otherwise {etag, record}. Throws the documented lock errors.
async function inspect(ops, id, key) {
  const fail = (cause) => new Error(`S3 Workspace "${id}" could not inspect its lock`, { cause })
  let response
  try {
    response = await ops.get(key)
  } catch (error) {
    throw fail(error)
  }
  if (response === undefined) return undefined
  if (!isAsyncIterable(response.Body)) throw new Error("S3 Workspace lock did not contain a streaming body")
  const chunks = []
  let size = 0
  try {
    for await (const chunk of response.Body) {
      size += chunk.length
      if (size > MAX_LOCK_BYTES) {
        response.Body.destroy?.()
        throw new RangeError("S3 Workspace lock exceeded 4096 bytes")
      }
      chunks.push(chunk)
    }
  } catch (error) {
    throw error instanceof RangeError ? error : fail(error)
  }
  if (typeof response.ETag !== "string" || response.ETag === "") throw new Error(NO_ETAG)
  let value
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"))
  } catch {
    throw new Error(`S3 Workspace "${id}" lock is not valid JSON`)
  }
  const record = parseRecord(value)
  if (record === undefined) throw new Error(`S3 Workspace "${id}" lock is invalid`)
  return { etag: response.ETag, record }
}

export class S3ClientLock {
  #ops
  #id
  #key
  #clock
  #timings
  #token
  #etag
  #refreshed
  #lost = false
  #timer
  #refreshing

  constructor(ops, id, key, clock, timings, token, etag, now) {
    this.#ops = ops
    this.#id = id
    this.#key = key
    this.#clock = clock
    this.#timings = timings
    this.#token = token
    this.#etag = etag
    this.#refreshed = now
    // Renewal must never keep Node alive.
    this.#timer = setInterval(() => void this.refresh().catch(() => {}), timings.refreshMs)
    this.#timer.unref?.()
  }

  /** Takes the lease or throws WorkspaceConflictError / the documented lock errors. */
  static async acquire(ops, id, key, { clock = systemClock, timings = LOCK_TIMINGS } = {}) {
    const token = randomUUID()
    const held = async (etag, now) => {
      if (typeof etag !== "string" || etag === "") {
        await ops.delete(key).catch(() => {})
        throw new Error(NO_ETAG)
      }
      return new S3ClientLock(ops, id, key, clock, timings, token, etag, now)
    }
    for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
      let now = clock.now()
      try {
        return await held(await ops.put(key, lockBody(token, now), { IfNoneMatch: "*" }), now)
      } catch (error) {
        if (error?.message === NO_ETAG) throw error
        if (!ops.isPrecondition(error)) throw new Error(`S3 Workspace "${id}" lock acquisition failed`, { cause: error })
      }
      const current = await inspect(ops, id, key)
      if (current === undefined) continue
      now = clock.now()
      if (now - current.record.time <= timings.staleMs) throw new WorkspaceConflictError(id)
      let etag
      try {
        etag = await ops.put(key, lockBody(token, now), { IfMatch: current.etag })
      } catch (error) {
        if (ops.isPrecondition(error)) throw new WorkspaceConflictError(id)
        throw new Error(`S3 Workspace "${id}" could not replace its stale lock`, { cause: error })
      }
      return held(etag, now)
    }
    throw new WorkspaceConflictError(id)
  }

  get token() {
    return this.#token
  }

  #lostError() {
    return new Error(`S3 Workspace "${this.#id}" lock was lost`)
  }

  /** Throws "lock was lost" once a renewal found another version or none succeeded in time. */
  check() {
    if (this.#lost || this.#clock.now() - this.#refreshed > this.#timings.staleMs) throw this.#lostError()
  }

  /** One renewal; concurrent calls share it. */
  refresh() {
    this.#refreshing ??= this.#renew().finally(() => {
      this.#refreshing = undefined
    })
    return this.#refreshing
  }

  async #renew() {
    if (this.#lost) throw this.#lostError()
    const now = this.#clock.now()
    let etag
    try {
      etag = await this.#ops.put(this.#key, lockBody(this.#token, now), { IfMatch: this.#etag })
    } catch (error) {
      if (!this.#ops.isPrecondition(error)) throw error
      this.#stop(true)
      throw this.#lostError()
    }
    if (typeof etag !== "string" || etag === "") {
      this.#stop(true)
      throw new Error(NO_ETAG)
    }
    this.#etag = etag
    this.#refreshed = now
  }

  #stop(lost) {
    clearInterval(this.#timer)
    if (lost) this.#lost = true
  }

  /** Deletes the lock if it is still ours; otherwise "lock was lost". */
  async release() {
    this.#stop(false)
    let current
    try {
      current = await inspect(this.#ops, this.#id, this.#key)
    } catch (error) {
      if (error?.message === `S3 Workspace "${this.#id}" could not inspect its lock`) throw error
      current = undefined
    }
    this.#lost = true
    if (current === undefined || current.record.token !== this.#token) throw this.#lostError()
    await this.#ops.delete(this.#key)
  }
}
