// BW-1 `localWorkspace()`: the configured directory is the Workspace, guarded by the
// proper-lockfile-compatible lock `<real dir>.lock` (crates/aml-workspace/src/lock.rs).

import { randomUUID } from "node:crypto"
import { resolve } from "node:path"

import { WorkspaceConflictError } from "../errors/errors.js"
import { localWorkspaceAcquire, localWorkspaceLockProblem, localWorkspaceRelease } from "../core/native.js"
import { isNormalized } from "../checks/normalized.js"
import { settled } from "./errors.js"

function configuredDirectory(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("Local Workspace options must be an object")
  let directory
  try {
    directory = options.directory
  } catch (cause) {
    throw new TypeError("Local Workspace directory must be readable", { cause })
  }
  if (!isNormalized(directory) || directory.includes("\0")) {
    throw new TypeError("Local Workspace directory must be a non-empty normalized string")
  }
  return resolve(directory)
}

async function releaseLock(lock, directory) {
  settled(await localWorkspaceRelease(lock, directory))
}

export function localWorkspace(options) {
  const directory = configuredDirectory(options)
  return Object.freeze({
    async acquire(request) {
      const { id, signal } = request
      if (signal?.aborted) throw signal.reason
      const lockRequested = request.lock !== false
      const outcome = settled(await localWorkspaceAcquire(directory, lockRequested))
      if (outcome.found === false) throw new WorkspaceConflictError(id)
      const lock = outcome.handle ?? undefined
      if (signal?.aborted) {
        if (lock !== undefined) {
          try {
            await releaseLock(lock, directory)
          } catch (cleanup) {
            throw new AggregateError(
              [signal.reason, cleanup],
              "Local Workspace acquisition was cancelled and lock cleanup failed",
            )
          }
        }
        throw signal.reason
      }
      const real = outcome.directory
      let released
      return Object.freeze({
        directory: real,
        handle: Object.freeze({ directory: real, kind: "local-workspace" }),
        id: `local-${randomUUID()}`,
        release() {
          released ??= lock === undefined ? Promise.resolve() : releaseLock(lock, directory)
          return released
        },
        async save() {
          if (lock === undefined || released !== undefined) return
          const problem = localWorkspaceLockProblem(lock)
          if (problem !== null && problem !== undefined) {
            throw new Error(`Local Workspace "${directory}" lock was compromised`, { cause: new Error(problem) })
          }
        },
      })
    },
    name: "local",
  })
}
