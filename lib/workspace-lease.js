// What AML accepts from WorkspaceProvider.acquire() (INVENTORY WS-1 lease validation): the
// lease is read once — release, save, then the materialization data — and checked with the
// exact TypeErrors. A malformed lease whose release() could be read is released before the
// error is reported. Shared by <Workspace> and workspaceProviderConformance (testing/), so a
// provider that passes conformance is accepted by the runtime with the same rules.

function isObject(value) {
  return (typeof value === "object" || typeof value === "function") && value !== null
}

function readMethod(label, lease, key, method) {
  let fn
  try {
    fn = lease[key]
  } catch (cause) {
    throw new TypeError(`${label} returned a lease with an unreadable ${method} method`, { cause })
  }
  if (typeof fn !== "function") throw new TypeError(`${label} returned a lease without ${method}()`)
  return fn
}

/**
 * Reads and checks `lease`. Returns `{ accepted }` with the frozen capture
 * `{ directory, handle, id, release, save, target }`, or `{ error, release }` for a
 * malformed lease: `release` is the captured release function when there was one, so the
 * caller decides how to clean up (it depends on whether the acquisition was cancelled).
 */
export function inspectWorkspaceLease(name, lease) {
  const label = `Workspace provider "${name}"`
  if (!isObject(lease)) return { error: new TypeError(`${label} returned an invalid lease`) }
  let release
  try {
    release = readMethod(label, lease, "release", "release")
  } catch (error) {
    return { error }
  }
  try {
    const save = readMethod(label, lease, "save", "save")
    let directory
    let handle
    let id
    try {
      directory = lease.directory
      handle = lease.handle
      id = lease.id
    } catch (cause) {
      throw new TypeError(`${label} returned a lease with unreadable materialization data`, { cause })
    }
    if (typeof directory !== "string" || directory.length === 0 || directory.includes("\0")) {
      throw new TypeError(`${label} returned a lease with an invalid directory`)
    }
    if (typeof id !== "string" || id.length === 0) throw new TypeError(`${label} returned a lease with an invalid id`)
    return { accepted: Object.freeze({ directory, handle, id, release, save, target: lease }) }
  } catch (error) {
    return { error, release }
  }
}

/**
 * Validates a lease from a completed (not cancelled) acquisition. A malformed lease is
 * released first; if that release fails the result is the documented AggregateError.
 */
export async function acceptWorkspaceLease(name, lease) {
  const inspected = inspectWorkspaceLease(name, lease)
  if (inspected.accepted !== undefined) return inspected.accepted
  if (inspected.release !== undefined) {
    try {
      await inspected.release.call(lease)
    } catch (cleanupError) {
      throw new AggregateError(
        [inspected.error, cleanupError],
        `Workspace provider "${name}" returned an invalid lease and cleanup failed or raced cancellation`,
      )
    }
  }
  throw inspected.error
}
