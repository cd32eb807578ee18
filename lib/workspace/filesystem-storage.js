// BW-2 `FilesystemWorkspaceStorage`: the filesystem store as a `WorkspaceStorageAdapter`
// (crates/aml-workspace/src/fs_storage.rs). Persistence built on an instance of this very
// class skips the JS adapter path entirely and runs the store in Rust
// (`nativeFilesystemDirectory`); calling its methods directly goes through the same store.

import { resolve } from "node:path"

import {
  filesystemStorageAcquire,
  filesystemStorageDelete,
  filesystemStorageList,
  filesystemStorageRead,
  filesystemStorageRelease,
  filesystemStorageWrite,
} from "../core/native.js"
import { isNormalized } from "../checks/normalized.js"
import { settled } from "./errors.js"

const directories = new WeakMap()

export function checkDirectory(options) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Filesystem Workspace options must be an object")
  }
  const { directory } = options
  if (!isNormalized(directory) || directory.includes("\0")) {
    throw new TypeError("Filesystem Workspace directory must be a non-empty normalized string")
  }
  return resolve(directory)
}

/** The store directory when `storage` is an unmodified FilesystemWorkspaceStorage. */
export function nativeFilesystemDirectory(storage) {
  if (Object.getPrototypeOf(storage) !== FilesystemWorkspaceStorage.prototype) return undefined
  if (Object.prototype.hasOwnProperty.call(storage, "acquire")) return undefined
  return directories.get(storage)
}

async function bodyBytes(body) {
  if (typeof body === "string") return Buffer.from(body, "utf8")
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const chunks = []
  for await (const chunk of body) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk))
  }
  return Buffer.concat(chunks)
}

async function* once(bytes) {
  yield new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export class FilesystemWorkspaceStorage {
  constructor(options) {
    directories.set(this, checkDirectory(options))
  }

  get name() {
    return "filesystem"
  }

  async acquire(request) {
    const { id, lock, signal } = request
    if (signal?.aborted) throw signal.reason
    const outcome = settled(await filesystemStorageAcquire(directories.get(this), id, lock !== false))
    const lease = outcome.handle
    let released
    return Object.freeze({
      handle: Object.freeze({ directory: outcome.directory, kind: "filesystem-workspace" }),
      async delete(paths) {
        settled(await filesystemStorageDelete(lease, [...paths]))
      },
      async list(prefix) {
        const { paths } = settled(await filesystemStorageList(lease, prefix))
        return paths.map((path) => Object.freeze({ path }))
      },
      async read(path) {
        const outcome = settled(await filesystemStorageRead(lease, path))
        if (!outcome.found) return undefined
        return { body: once(outcome.body), version: Object.freeze({ value: outcome.version }) }
      },
      release() {
        released ??= filesystemStorageRelease(lease).then((outcome) => {
          settled(outcome)
        })
        return released
      },
      async write(path, body, options) {
        const condition = options?.condition
        const absent = condition?.kind === "absent"
        const version = condition?.kind === "version" ? condition.version?.value : undefined
        const bytes = await bodyBytes(body)
        const outcome = settled(await filesystemStorageWrite(lease, path, bytes, absent, version ?? null))
        return Object.freeze({ value: outcome.version })
      },
    })
  }
}
