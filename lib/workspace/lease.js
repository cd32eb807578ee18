// What AML accepts from WorkspaceProvider.acquire() (INVENTORY WS-1 lease validation),
// shared by <Workspace> and workspaceProviderConformance (testing/), so a provider that
// passes conformance is accepted by the runtime with the same rules.
//
// The lease is read once, in a fixed order, because providers may hand back proxies or
// getters with side effects (including aborting the run):
//   1. `release` — the cleanup authority. Without it nothing can be given back.
//   2. if the run was cancelled meanwhile: release, then stop with the reason.
//   3. `save`, then `directory`, `handle`, `id`.
// A lease that fails step 3 is released exactly once before its error is reported; a
// cancellation that arrived before or during that release is reported first.

// Ids and paths are compared verbatim, so they must be normalized strings.
import { isNormalized as isExact } from "../checks/normalized.js"

import { isObjectLike as isObject, readFields, readLeaseMethod as readMethod } from "../checks/shapes.js"


function readMaterialization(label, lease, release) {
  const save = readMethod(label, lease, "save")
  const { directory, handle, id } = readFields(
    lease,
    ["directory", "handle", "id"],
    `${label} returned a lease with unreadable materialization data`,
  )
  if (!isExact(directory) || directory.includes("\0")) {
    throw new TypeError(`${label} returned a lease with an invalid directory`)
  }
  if (!isExact(id)) throw new TypeError(`${label} returned a lease with an invalid id`)
  return Object.freeze({ directory, handle, id, release, save, target: lease })
}

/**
 * The lease's release function if it can be read, else undefined; never throws. For a
 * lease delivered after nobody waits for it any more (it is only given back).
 */
export function captureRelease(lease) {
  if (!isObject(lease)) return undefined
  try {
    const release = lease.release
    return typeof release === "function" ? release : undefined
  } catch {
    return undefined
  }
}

/**
 * Validates the lease an acquisition resolved with, while `signal` may abort at any point.
 * Resolves with the frozen capture `{ directory, handle, id, release, save, target }`;
 * otherwise the lease has been given back (when it could be) and this rejects with the
 * documented error.
 */
export async function acceptWorkspaceLease(name, lease, signal) {
  const label = `Workspace provider "${name}"`
  let release
  try {
    if (!isObject(lease)) throw new TypeError(`${label} returned an invalid lease`)
    release = readMethod(label, lease, "release")
  } catch (error) {
    // No cleanup authority: nothing can be given back.
    if (!signal.aborted) throw error
    throw new AggregateError([signal.reason, error], `${label} completed cancelled acquisition with an invalid lease`)
  }

  if (signal.aborted) {
    const reason = signal.reason
    try {
      await release.call(lease)
    } catch (releaseError) {
      throw new AggregateError([reason, releaseError], "Workspace acquisition was cancelled and cleanup failed")
    }
    throw reason
  }

  let invalid
  try {
    return readMaterialization(label, lease, release)
  } catch (error) {
    invalid = error
  }
  const errors = [invalid]
  try {
    await release.call(lease)
  } catch (releaseError) {
    errors.push(releaseError)
  }
  if (signal.aborted) errors.unshift(signal.reason)
  if (errors.length === 1) throw invalid
  throw new AggregateError(errors, `${label} returned an invalid lease and cleanup failed or raced cancellation`)
}
