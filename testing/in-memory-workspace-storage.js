// TST-4 `InMemoryWorkspaceStorageAdapter`: a stateful WorkspaceStorageAdapter spy. Objects,
// locks and versions (`memory-N`) live in memory; every lease operation is recorded.

import { WorkspaceConflictError } from "../lib/errors/errors.js"

async function bytesOf(body) {
  if (typeof body === "string") return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body.slice()
  const chunks = []
  let size = 0
  for await (const chunk of body) {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk)
    chunks.push(bytes)
    size += bytes.length
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

async function* once(bytes) {
  yield bytes.slice()
}

export class InMemoryWorkspaceStorageAdapter {
  #objects = new Map()
  #locks = new Set()
  #operations = []
  #versions = 0

  get name() {
    return "memory-workspace-storage"
  }

  /** Every lease operation so far, in order (frozen entries). */
  get operations() {
    return Object.freeze([...this.#operations])
  }

  /** The stored object paths of one Workspace, sorted. */
  keys(workspaceId) {
    return [...(this.#objects.get(workspaceId)?.keys() ?? [])].sort()
  }

  /** One stored object as UTF-8 text, or `undefined`. */
  async text(workspaceId, path) {
    const object = this.#objects.get(workspaceId)?.get(path)
    return object === undefined ? undefined : new TextDecoder().decode(object.bytes)
  }

  #record(kind, workspaceId, path) {
    const operation = path === undefined ? { kind, workspaceId } : { kind, path, workspaceId }
    this.#operations.push(Object.freeze(operation))
  }

  #store(workspaceId) {
    let store = this.#objects.get(workspaceId)
    if (store === undefined) {
      store = new Map()
      this.#objects.set(workspaceId, store)
    }
    return store
  }

  async acquire(request) {
    const { id, lock, signal } = request
    if (signal?.aborted) throw signal.reason
    const locked = lock !== false
    if (locked) {
      if (this.#locks.has(id)) throw new WorkspaceConflictError(id)
      this.#locks.add(id)
    }
    const adapter = this
    let released = false
    return Object.freeze({
      handle: Object.freeze({ kind: "memory-workspace-storage", workspaceId: id }),
      async delete(paths) {
        for (const path of paths) {
          adapter.#record("delete", id, path)
          adapter.#store(id).delete(path)
        }
      },
      async list(prefix) {
        adapter.#record("list", id, prefix)
        return adapter.keys(id).filter((path) => path.startsWith(prefix)).map((path) => Object.freeze({ path }))
      },
      async read(path) {
        adapter.#record("read", id, path)
        const object = adapter.#store(id).get(path)
        if (object === undefined) return undefined
        return { body: once(object.bytes), version: Object.freeze({ value: object.version }) }
      },
      async release() {
        adapter.#record("release", id)
        if (released) return
        released = true
        if (locked) adapter.#locks.delete(id)
      },
      async write(path, body, options) {
        adapter.#record("write", id, path)
        const bytes = await bytesOf(body)
        const store = adapter.#store(id)
        const current = store.get(path)
        const condition = options?.condition
        const holds =
          condition === undefined ||
          (condition.kind === "absent" && current === undefined) ||
          (condition.kind === "version" && current !== undefined && current.version === condition.version?.value)
        if (!holds) throw new Error(`Workspace storage condition failed for "${path}"`)
        const version = `memory-${++adapter.#versions}`
        store.set(path, { bytes, version })
        return Object.freeze({ value: version })
      },
    })
  }
}
