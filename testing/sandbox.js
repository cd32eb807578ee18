// Sandbox fixtures of @aml-jsx/sdk/testing (INVENTORY TST-2, TST-6): a credential-free
// provider that records acquisitions and releases, and the portable conformance check.

import { captureSandboxProvider } from "../lib/core/provider-shape.js"
import { acceptLease } from "../lib/sandbox/lease.js"
import { isNormalized } from "../lib/checks/normalized.js"

const ENCODER = new TextEncoder()

function defaultExec(command, args) {
  return { exitCode: 0, stderr: "", stdout: [command, ...args].join(" ") }
}

function closedStream(text) {
  return new ReadableStream({
    start(controller) {
      if (text.length > 0) controller.enqueue(ENCODER.encode(text))
      controller.close()
    },
  })
}

/** A process that has already exited 0 after writing the exec stdout. */
function defaultSpawn(command, args) {
  const exit = Object.freeze({ exitCode: 0 })
  return Object.freeze({
    id: `deterministic-process:${command}`,
    stdin: new WritableStream(),
    stdout: closedStream(defaultExec(command, args).stdout),
    stderr: closedStream(""),
    kill: async () => {},
    wait: async () => exit,
  })
}

/** A SandboxProvider that runs nothing: its runtime answers from application-owned hooks. */
export class DeterministicSandboxProvider {
  #acquisitions = []
  #releases = []
  #createHandle
  #exec
  #release
  #spawn

  constructor({ createHandle, exec, name = "deterministic-sandbox", release, spawn } = {}) {
    if (typeof name !== "string" || name.length === 0) {
      throw new TypeError("Deterministic Sandbox provider name must not be empty")
    }
    if (!isNormalized(name)) throw new TypeError("Deterministic Sandbox provider name must already be normalized")
    this.name = name
    this.#createHandle = createHandle
    this.#exec = exec
    this.#release = release
    this.#spawn = spawn
  }

  /** The acquisition requests, in order (a frozen snapshot). */
  get acquisitions() {
    return Object.freeze([...this.#acquisitions])
  }

  /** The ids of released leases, in release order (a frozen snapshot). */
  get releases() {
    return Object.freeze([...this.#releases])
  }

  async acquire(request) {
    const signal = request.signal
    if (signal?.aborted) throw signal.reason
    // Zero-based, like DeterministicAgentProvider's call index; lease ids stay 1-based.
    const acquisition = this.#acquisitions.length
    this.#acquisitions.push(request)
    const id = `${this.name}-${acquisition + 1}`
    const createHandle = this.#createHandle
    const handle =
      createHandle === undefined
        ? Object.freeze({ acquisition, kind: "deterministic-sandbox", request })
        : await createHandle(request, acquisition)
    const execHook = this.#exec
    const spawnHook = this.#spawn
    // Hooks see the lease's acquisition request and exactly the options the caller passed.
    const runtime = Object.freeze({
      access: request.access,
      cwd: request.cwd,
      root: request.root,
      async exec(command, args = [], options) {
        return execHook === undefined ? defaultExec(command, args) : execHook(command, args, request, options)
      },
      async spawn(command, args = [], options) {
        return spawnHook === undefined ? defaultSpawn(command, args) : spawnHook(command, args, request, options)
      },
    })
    const releases = this.#releases
    const releaseHook = this.#release
    let released
    return Object.freeze({
      handle,
      id,
      // Memoised: the provider records (and runs its hook for) a lease once.
      release() {
        released ??= (async () => {
          releases.push(id)
          if (releaseHook !== undefined) await releaseHook(Object.freeze({ handle, id }), acquisition)
        })()
        return released
      },
      runtime,
    })
  }
}

/**
 * Checks the portable Sandbox provider contract: one read-only acquisition whose lease and
 * runtime pass the runtime's validation and preserve the requested access, cwd and root;
 * the lease is always released.
 */
export async function sandboxProviderConformance(provider) {
  const { acquire, name } = captureSandboxProvider(provider)
  const request = Object.freeze({
    access: "read-only",
    cwd: ".",
    evaluationId: "sandbox-provider-conformance",
    root: ".",
    signal: new AbortController().signal,
  })
  const lease = await acceptLease(name, await acquire.call(provider, request))
  try {
    const runtime = lease.runtime
    if (runtime.access !== request.access || runtime.cwd !== request.cwd || runtime.root !== request.root) {
      throw new TypeError(`Sandbox provider "${name}" runtime must preserve the acquired access, cwd, and root`)
    }
  } catch (error) {
    try {
      await lease.release.call(lease.target)
    } catch (cleanupError) {
      throw new AggregateError([error, cleanupError], `Sandbox provider "${name}" failed conformance and cleanup`)
    }
    throw error
  }
  await lease.release.call(lease.target)
}
