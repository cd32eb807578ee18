// What AML accepts from SandboxProvider.acquire() (INVENTORY SB-1): the lease is read once,
// validated with the exact TypeErrors, and replaced by a capture whose runtime validates and
// freezes every exec() result and spawn() process. Descendants only ever see the capture, so
// a provider's later mutation of its lease object changes nothing.
//
// Shared by <Sandbox> and sandboxProviderConformance (testing/), so a provider that passes
// conformance is accepted by the runtime with the same rules.

import { isNormalized } from "../checks/normalized.js"
import { isObjectLike as isObject, readFields, readLeaseMethod } from "../checks/shapes.js"

/**
 * Validates `lease` from the provider named `name`. Resolves with
 * `{ handle, id, release, runtime, target }` (`release` is the provider's function, to be
 * called with `this = target`). A malformed lease whose `release` could be read is released
 * before the TypeError is thrown; if that release fails too the result is an AggregateError.
 */
export async function acceptLease(name, lease) {
  const label = `Sandbox provider "${name}"`
  if (!isObject(lease)) throw new TypeError(`${label} returned an invalid lease`)
  const release = readLeaseMethod(label, lease, "release")
  try {
    return captureIdentity(label, lease, release)
  } catch (error) {
    try {
      await release.call(lease)
    } catch (cleanupError) {
      throw new AggregateError([error, cleanupError], `${label} returned an invalid lease and cleanup failed`)
    }
    throw error
  }
}

function captureIdentity(label, lease, release) {
  const { handle, id, runtime } = readFields(
    lease,
    ["handle", "id", "runtime"],
    `${label} returned a lease with unreadable identity data`,
  )
  // Lease ids name the lease in release errors and traces: a non-empty string without
  // surrounding whitespace (so "a" and " a" can never name two different leases).
  if (!isNormalized(id)) {
    throw new TypeError(`${label} returned a lease with an invalid id`)
  }
  return { handle, id, release, runtime: validateSandboxRuntime(label, runtime), target: lease }
}

/**
 * Reads a provider runtime once and returns a frozen wrapper with the same access, cwd and
 * root whose exec() results and spawn() processes are validated and frozen. `label` is
 * `Sandbox provider "<name>"`.
 */
export function validateSandboxRuntime(label, runtime) {
  if (!isObject(runtime)) throw new TypeError(`${label} returned an invalid runtime`)
  const { access, cwd, root, exec, spawn } = readFields(
    runtime,
    ["access", "cwd", "root", "exec", "spawn"],
    `${label} returned an unreadable runtime`,
  )
  if (access !== "read-only" && access !== "read-write") {
    throw new TypeError(`${label} returned a runtime with invalid access`)
  }
  if (typeof cwd !== "string" || cwd.length === 0) throw new TypeError(`${label} returned a runtime with invalid cwd`)
  if (typeof root !== "string" || root.length === 0) {
    throw new TypeError(`${label} returned a runtime with invalid root`)
  }
  if (typeof exec !== "function") throw new TypeError(`${label} returned a runtime without exec()`)
  if (typeof spawn !== "function") throw new TypeError(`${label} returned a runtime without spawn()`)
  return Object.freeze({
    access,
    cwd,
    root,
    // Rest parameters keep the caller's arity: a provider's defaults see what was omitted.
    async exec(...parameters) {
      return checkResult(label, await exec.apply(runtime, parameters))
    },
    async spawn(...parameters) {
      return checkProcess(label, await spawn.apply(runtime, parameters))
    },
  })
}

function checkResult(label, result) {
  if (!isObject(result)) throw new TypeError(`${label} returned an invalid command result`)
  const { exitCode, stderr, stdout } = readFields(
    result,
    ["exitCode", "stderr", "stdout"],
    `${label} returned an unreadable command result`,
  )
  if (!Number.isInteger(exitCode) || typeof stderr !== "string" || typeof stdout !== "string") {
    throw new TypeError(`${label} returned an invalid command result`)
  }
  return Object.freeze({ exitCode, stderr, stdout })
}

// Streams are duck-typed rather than checked with instanceof, so providers built on a Web
// Streams polyfill or another realm's classes are accepted.
function isWritable(stream) {
  return isObject(stream) && typeof stream.getWriter === "function"
}

function isReadable(stream) {
  return isObject(stream) && typeof stream.getReader === "function"
}

function checkProcess(label, process) {
  if (!isObject(process)) throw new TypeError(`${label} returned an invalid process`)
  const unreadable = `${label} returned an unreadable process`
  const { id, stdin, stdout, stderr, kill, wait } = readFields(
    process,
    ["id", "stdin", "stdout", "stderr", "kill", "wait"],
    unreadable,
  )
  // The streams' own methods are read too: a throwing getter there is the same refusal.
  let shaped
  try {
    shaped = isWritable(stdin) && isReadable(stdout) && isReadable(stderr)
  } catch (cause) {
    throw new TypeError(unreadable, { cause })
  }
  if (
    typeof id !== "string" ||
    id.length === 0 ||
    !shaped ||
    typeof kill !== "function" ||
    typeof wait !== "function"
  ) {
    throw new TypeError(`${label} returned an invalid process`)
  }
  let exit
  return Object.freeze({
    id,
    stdin,
    stdout,
    stderr,
    async kill() {
      await kill.call(process)
    },
    // Memoised here as well, so every caller sees the same validated exit even when a
    // provider's wait() is not idempotent.
    wait() {
      exit ??= Promise.resolve(wait.call(process)).then((value) => checkExit(label, value))
      return exit
    },
  })
}

function checkExit(label, exit) {
  let exitCode
  try {
    exitCode = isObject(exit) ? exit.exitCode : undefined
  } catch (cause) {
    throw new TypeError(`${label} returned an invalid process exit`, { cause })
  }
  if (!Number.isInteger(exitCode)) throw new TypeError(`${label} returned an invalid process exit`)
  return Object.freeze({ exitCode })
}
