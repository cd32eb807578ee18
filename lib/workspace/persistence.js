// WP-1: `WorkspacePersistence` and `createPersistentWorkspaceProvider`. The lifecycle runs in
// Rust (crates/aml-workspace/src/persistence.rs): the filesystem store natively, any other
// `WorkspaceStorageAdapter` through the storage dispatcher (lib/workspace/storage-dispatch.js).
// This file validates options and requests, and shapes the lease.

import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { resolve } from "node:path"

import { nativeFilesystemDirectory } from "./filesystem-storage.js"
import { workspaceFilesystemAcquire, workspaceJsAcquire, workspaceRelease, workspaceSave } from "../core/native.js"
import { isNormalized } from "../checks/normalized.js"
import { cancellable } from "./cancellation.js"
import { settled } from "./errors.js"
import { forgetLease, lendLease, takeHostErrors } from "./storage-dispatch.js"

const DEFAULTS = Object.freeze({
  maxArchiveBytes: 256 * 1024 * 1024,
  maxEntries: 100_000,
  maxExtractedBytes: 1024 * 1024 * 1024,
})

function isAdapter(storage) {
  if (typeof storage !== "object" || storage === null) return false
  try {
    return isNormalized(storage.name) && !storage.name.includes("\0") && typeof storage.acquire === "function"
  } catch {
    return false
  }
}

const LEASE_METHODS = ["read", "write", "list", "delete", "release"]

function isStorageLease(lease) {
  if (typeof lease !== "object" || lease === null) return false
  try {
    return LEASE_METHODS.every((method) => typeof lease[method] === "function")
  } catch {
    return false
  }
}

function checkOptions(options) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Workspace persistence options must be an object")
  }
  const { format = "archive", storage, temporaryDirectory } = options
  if (!isAdapter(storage)) throw new TypeError("Workspace persistence storage must be a valid adapter")
  if (format !== "archive" && format !== "folder") {
    throw new TypeError('Workspace persistence format must be "archive" or "folder"')
  }
  const limits = {}
  for (const label of ["maxArchiveBytes", "maxEntries", "maxExtractedBytes"]) {
    const value = options[label] ?? DEFAULTS[label]
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`Workspace persistence ${label} must be a positive safe integer`)
    }
    limits[label] = value
  }
  if (temporaryDirectory !== undefined && (!isNormalized(temporaryDirectory) || temporaryDirectory.includes("\0"))) {
    throw new TypeError("Workspace persistence temporaryDirectory must be a non-empty normalized string")
  }
  return {
    format,
    limits,
    storage,
    temporaryDirectory: resolve(temporaryDirectory ?? tmpdir()),
  }
}

function strings(value) {
  return Array.isArray(value) ? value.filter((item) => typeof item === "string") : []
}

function loadJson(load) {
  if (load === false) return null
  if (load === undefined || load === true) return JSON.stringify({ exclude: [], revision: "current" })
  const request = { exclude: strings(load.exclude), revision: typeof load.revision === "string" ? load.revision : "current" }
  if (load.include !== undefined) request.include = strings(load.include)
  return JSON.stringify(request)
}

function saveJson(request) {
  const save = { exclude: [], gitignore: true, retention: 1 }
  if (request !== undefined && request !== null) {
    save.exclude = strings(request.exclude)
    if (request.include !== undefined) save.include = strings(request.include)
    if (typeof request.gitignore === "boolean") save.gitignore = request.gitignore
    if (Number.isSafeInteger(request.retention) && request.retention > 0) save.retention = request.retention
  }
  return JSON.stringify(save)
}

/**
 * The provider-independent revision lifecycle over one `WorkspaceStorageAdapter`: materialize,
 * save, release. `createPersistentWorkspaceProvider()` wraps one as a `WorkspaceProvider`.
 */
export class WorkspacePersistence {
  #config

  constructor(options) {
    this.#config = checkOptions(options)
  }

  get name() {
    return this.#config.storage.name
  }

  async acquire(request) {
    const { format, limits, storage, temporaryDirectory } = this.#config
    const { evaluationId, id, signal } = request
    const lock = request.lock !== false
    if (signal?.aborted) throw signal.reason
    // The id only names the Workspace in a failed save's message (a full disk, for one).
    const options = JSON.stringify({ format, temporaryDirectory, workspaceId: id, ...limits })
    const load = loadJson(request.load)
    const native = nativeFilesystemDirectory(storage)
    let reference = 0
    let storageHandle
    let outcome
    if (native !== undefined) {
      outcome = await cancellable(signal, (cancel) => workspaceFilesystemAcquire(native, id, lock, options, load, cancel))
      storageHandle = Object.freeze({ directory: outcome.version, kind: "filesystem-workspace" })
    } else {
      const lease = await storage.acquire({ evaluationId, id, lock, signal })
      if (!isStorageLease(lease)) {
        throw new TypeError(`Workspace storage "${storage.name}" returned an invalid lease`)
      }
      storageHandle = lease.handle
      reference = lendLease(lease, storage.name)
      try {
        outcome = await cancellable(
          signal,
          (cancel) => workspaceJsAcquire(reference, options, load, cancel),
          () => takeHostErrors(reference),
        )
      } catch (error) {
        forgetLease(reference)
        throw error
      }
    }
    return persistentLease(this.name, outcome, { format, reference, storage: storageHandle })
  }
}

function persistentLease(name, outcome, { format, reference, storage }) {
  const session = outcome.handle
  const handle = { format, kind: "persistent-workspace" }
  if (outcome.revisionId !== undefined && outcome.revisionId !== null) handle.revisionId = outcome.revisionId
  handle.storage = storage
  const hostErrors = () => (reference === 0 ? undefined : takeHostErrors(reference))
  let released
  let saving = Promise.resolve()
  return Object.freeze({
    directory: outcome.directory,
    handle: Object.freeze(handle),
    id: `${name}-${randomUUID()}`,
    release() {
      released ??= (async () => {
        await saving.catch(() => {})
        try {
          settled(await workspaceRelease(session), hostErrors())
        } finally {
          if (reference !== 0) forgetLease(reference)
        }
      })()
      return released
    },
    save(request) {
      if (request?.signal?.aborted) return Promise.reject(request.signal.reason)
      if (released !== undefined) return Promise.reject(new Error("Workspace lease was already released"))
      const run = saving.catch(() => {}).then(async () => {
        await cancellable(request?.signal, (cancel) => workspaceSave(session, saveJson(request), cancel), hostErrors)
      })
      saving = run
      return run
    },
  })
}

/** WP-1: a frozen `WorkspaceProvider` named after its storage adapter. */
export function createPersistentWorkspaceProvider(options) {
  const persistence = new WorkspacePersistence(options)
  return Object.freeze({
    acquire: (request) => persistence.acquire(request),
    name: persistence.name,
  })
}
