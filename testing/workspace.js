// Workspace fixtures of @aml-jsx/sdk/testing (INVENTORY TST-3, TST-7): a credential-free
// provider that records acquisitions, saves and releases and enforces one active writer per
// id, and the portable conformance check.

import { WorkspaceConflictError } from "../lib/errors/errors.js"
import { isNormalized } from "../lib/checks/normalized.js"
import { captureWorkspaceProvider } from "../lib/core/provider-shape.js"
import { acceptWorkspaceLease } from "../lib/workspace/lease.js"

const DEFAULT_DIRECTORY = "/deterministic-workspace"

/** A WorkspaceProvider that stores nothing: its directory and hooks are application-owned. */
export class DeterministicWorkspaceProvider {
  #acquisitions = []
  #saves = []
  #releases = []
  /** Ids held by an active locking lease. */
  #active = new Set()
  #createHandle
  #directory
  #release
  #save

  constructor({ createHandle, directory = DEFAULT_DIRECTORY, name = "deterministic-workspace", release, save } = {}) {
    if (!isNormalized(name)) throw new TypeError("Deterministic Workspace provider name must be non-empty and normalized")
    this.name = name
    this.#createHandle = createHandle
    this.#directory = directory
    this.#release = release
    this.#save = save
  }

  /** The acquisition requests, in order (a frozen snapshot). */
  get acquisitions() {
    return Object.freeze([...this.#acquisitions])
  }

  /** The ids of leases whose save() succeeded, in save order (a frozen snapshot). */
  get saves() {
    return Object.freeze([...this.#saves])
  }

  /** The ids of released leases, in release order (a frozen snapshot). */
  get releases() {
    return Object.freeze([...this.#releases])
  }

  async acquire(request) {
    const signal = request.signal
    if (signal?.aborted) throw signal.reason
    const workspaceId = request.id
    // `lock: false` opts out of writer exclusion, as it does for the built-in providers.
    const locking = request.lock !== false
    if (locking && this.#active.has(workspaceId)) throw new WorkspaceConflictError(workspaceId)
    if (locking) this.#active.add(workspaceId)
    // Zero-based, like the Sandbox and Agent fixtures' indices; lease ids stay 1-based.
    const acquisition = this.#acquisitions.length
    this.#acquisitions.push(request)
    const id = `${this.name}-${acquisition + 1}`
    let directory
    let handle
    try {
      const createHandle = this.#createHandle
      handle =
        createHandle === undefined
          ? Object.freeze({ acquisition, kind: "deterministic-workspace", request })
          : await createHandle(request, acquisition)
      const configured = this.#directory
      directory = typeof configured === "function" ? await configured(request, acquisition) : configured
    } catch (error) {
      // A failed hook leaves no writer behind.
      if (locking) this.#active.delete(workspaceId)
      throw error
    }
    const saves = this.#saves
    const releases = this.#releases
    const active = this.#active
    const saveHook = this.#save
    const releaseHook = this.#release
    // What the hooks see: the lease's materialization, never its save/release authority.
    const identity = Object.freeze({ directory, handle, id })
    let released
    return Object.freeze({
      directory,
      handle,
      id,
      async save() {
        if (released !== undefined) throw new Error(`Workspace lease "${id}" was already released`)
        // Recorded before the hook, so a failed attempt is listed too.
        saves.push(id)
        if (saveHook !== undefined) await saveHook(identity, acquisition)
      },
      // Memoised: the provider records (and runs its hook for) a lease once; the writer is
      // freed whatever the hook does.
      release() {
        released ??= (async () => {
          releases.push(id)
          if (locking) active.delete(workspaceId)
          if (releaseHook !== undefined) await releaseHook(identity, acquisition)
        })()
        return released
      },
    })
  }
}

const CONFORMANCE_ID = "conformance-workspace"

function conformanceRequest(signal) {
  return Object.freeze({
    evaluationId: "workspace-provider-conformance",
    id: CONFORMANCE_ID,
    load: Object.freeze({ exclude: Object.freeze([]), revision: "current" }),
    lock: true,
    save: true,
    signal,
  })
}

/** Saves, then releases; a save failure still releases. */
async function persist(lease, signal) {
  const request = Object.freeze({ exclude: Object.freeze([]), gitignore: true, outcome: "success", retention: 1, signal })
  try {
    await lease.save.call(lease.target, request)
  } catch (error) {
    try {
      await lease.release.call(lease.target)
    } catch (cleanupError) {
      throw new AggregateError([error, cleanupError], "Workspace provider failed persistence and cleanup")
    }
    throw error
  }
  await lease.release.call(lease.target)
}

/**
 * A second writer for the held id must be refused with WorkspaceConflictError. A competing
 * lease that does resolve is checked like any lease (its validation error is the finding),
 * and a valid one is proof of concurrent writers: both leases are released, newest first.
 * Resolves with that finding (`first` is released then); rejects with any other failure,
 * `first` still held.
 */
async function expectConflict(provider, name, signal, first) {
  let second
  try {
    second = await provider.acquire.call(provider.target, conformanceRequest(signal))
  } catch (error) {
    if (WorkspaceConflictError.is(error, CONFORMANCE_ID)) return undefined
    throw error
  }
  const accepted = await acceptWorkspaceLease(name, second, signal)
  const errors = [new TypeError(`Workspace provider "${name}" allowed concurrent writers for "${CONFORMANCE_ID}"`)]
  for (const lease of [accepted, first]) {
    try {
      await lease.release.call(lease.target)
    } catch (releaseError) {
      errors.push(releaseError)
    }
  }
  if (errors.length === 1) return errors[0]
  return new AggregateError(errors, `Workspace provider "${name}" allowed concurrent writers and cleanup failed`)
}

/**
 * Checks the portable Workspace provider contract: a locked acquisition of
 * "conformance-workspace" whose lease passes the runtime's validation, refusal of a second
 * concurrent writer, save and release, then a restoring acquisition with save and release.
 */
export async function workspaceProviderConformance(provider) {
  const captured = captureWorkspaceProvider(provider)
  const name = captured.name
  const signal = new AbortController().signal
  const acquire = async () =>
    acceptWorkspaceLease(name, await captured.acquire.call(provider, conformanceRequest(signal)), signal)
  const first = await acquire()
  let concurrent
  try {
    concurrent = await expectConflict(captured, name, signal, first)
  } catch (error) {
    try {
      await first.release.call(first.target)
    } catch (cleanupError) {
      throw new AggregateError([error, cleanupError], `Workspace provider "${name}" failed conformance and cleanup`)
    }
    throw error
  }
  // Both leases were released already.
  if (concurrent !== undefined) throw concurrent
  await persist(first, signal)
  // The identity is free again and what was saved is restored.
  await persist(await acquire(), signal)
}
