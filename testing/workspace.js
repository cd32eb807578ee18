// Workspace fixtures of @aml-jsx/sdk/testing (INVENTORY TST-3, TST-7): a credential-free
// provider that records acquisitions, saves and releases and enforces one active writer per
// id, and the portable conformance check.

import { WorkspaceConflictError } from "../lib/errors.js"
import { isNormalized } from "../lib/normalized.js"
import { captureWorkspaceProvider } from "../lib/provider-shape.js"
import { acceptWorkspaceLease, inspectWorkspaceLease } from "../lib/workspace-lease.js"

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
    this.#acquisitions.push(request)
    const acquisition = this.#acquisitions.length
    const id = `${this.name}-${acquisition}`
    let directory
    let handle
    try {
      const configured = this.#directory
      directory = typeof configured === "function" ? await configured(request, acquisition) : configured
      const createHandle = this.#createHandle
      handle =
        createHandle === undefined
          ? Object.freeze({ acquisition, kind: "deterministic-workspace", request })
          : await createHandle(request, acquisition)
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
    let released
    return Object.freeze({
      directory,
      handle,
      id,
      async save(saveRequest) {
        if (released !== undefined) throw new Error(`Workspace lease "${id}" was already released`)
        if (saveHook !== undefined) await saveHook(saveRequest, handle, id)
        saves.push(id)
      },
      // Memoised: the provider records (and runs its hook for) a lease once.
      release() {
        released ??= (async () => {
          releases.push(id)
          if (locking) active.delete(workspaceId)
          if (releaseHook !== undefined) await releaseHook(handle, id)
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

/** A second writer for the held id must be refused with WorkspaceConflictError. */
async function expectConflict(provider, name, signal) {
  let second
  try {
    second = await provider.acquire.call(provider.target, conformanceRequest(signal))
  } catch (error) {
    if (WorkspaceConflictError.is(error, CONFORMANCE_ID)) return
    throw error
  }
  const error = new TypeError(`Workspace provider "${name}" allowed concurrent writers for "${CONFORMANCE_ID}"`)
  const { accepted, release } = inspectWorkspaceLease(name, second)
  try {
    if (accepted !== undefined) await accepted.release.call(second)
    else if (release !== undefined) await release.call(second)
  } catch (cleanupError) {
    throw new AggregateError(
      [error, cleanupError],
      `Workspace provider "${name}" allowed concurrent writers and cleanup failed`,
    )
  }
  throw error
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
    acceptWorkspaceLease(name, await captured.acquire.call(provider, conformanceRequest(signal)))
  const first = await acquire()
  try {
    await expectConflict(captured, name, signal)
  } catch (error) {
    try {
      await first.release.call(first.target)
    } catch (cleanupError) {
      throw new AggregateError([error, cleanupError], `Workspace provider "${name}" failed conformance and cleanup`)
    }
    throw error
  }
  await persist(first, signal)
  // The identity is free again and what was saved is restored.
  await persist(await acquire(), signal)
}
