// Sandbox provider authoring (INVENTORY PA-9, PA-10, PA-11): defineSandboxProvider, the
// staged AbstractSandboxProvider template, and SandboxCommand, the validated command a
// provider runtime executes. Nothing in the SDK checks `instanceof`: a subclass is an
// ordinary SandboxProvider.

import { posix } from "node:path"

import { captureSandboxProvider } from "../core/provider-shape.js"
import { sandboxCommandCwdProblem } from "../core/native.js"
import { isTimerDelay } from "../checks/timer-delay.js"
import { isRecord as isPlainObject } from "../checks/shapes.js"

/** Validates `implementation` as a SandboxProvider (RT-1 TypeErrors) and shallow-freezes it. */
export function defineSandboxProvider(implementation) {
  captureSandboxProvider(implementation)
  // A shallow freeze keeps class instances usable: private #fields are not properties.
  return Object.freeze(implementation)
}

function throwIfAborted(signal) {
  if (signal?.aborted) throw signal.reason
}

export class AbstractSandboxProvider {
  /** `protected` in the typings: only subclasses construct a provider. */
  constructor(name) {
    this.name = name
  }

  /** Optional hook after the runtime exists (setup commands…); a no-op by default. */
  async initialize() {}

  /** Compensation for a failed acquisition after provisioning; defaults to releaseResource. */
  async cleanupProvisioned(provisioned, request) {
    await this.releaseResource(provisioned, request)
  }

  async acquire(request) {
    const signal = request.signal
    throwIfAborted(signal)
    const provisioned = await this.provision(request)
    let runtime
    try {
      throwIfAborted(signal)
      runtime = await this.createRuntime(provisioned, request)
      await this.initialize(provisioned, runtime, request)
      throwIfAborted(signal)
    } catch (error) {
      // Whatever was provisioned belongs to nobody yet: compensate before failing.
      try {
        await this.cleanupProvisioned(provisioned, request)
      } catch (cleanupError) {
        throw new AggregateError([error, cleanupError], `Sandbox provider "${this.name}" acquisition and cleanup failed`)
      }
      throw error
    }
    let releasing
    const release = () => {
      releasing ??= (async () => this.releaseResource(provisioned, request))()
      return releasing
    }
    return Object.freeze({ handle: provisioned.handle, id: provisioned.id, release, runtime })
  }
}

const NUL = "\0"
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/


/**
 * The cwd rule (crates/aml-files/src/portable_path.rs `command_cwd_problem`): a normalized
 * relative forward-slash path that is the root or below it (trailing slashes aside).
 * `"not-normalized"`, `"outside"` or null.
 */
function cwdProblem(cwd, root) {
  if (typeof cwd !== "string") return "not-normalized"
  if (typeof root !== "string") {
    if (sandboxCommandCwdProblem(cwd, ".") === "not-normalized") return "not-normalized"
    // A non-string root fails as `posix.normalize` always did on it.
    posix.normalize(root)
  }
  return sandboxCommandCwdProblem(cwd, root) ?? null
}

function readEnv(value) {
  if (value === undefined) return Object.freeze({})
  if (!isPlainObject(value)) throw new TypeError("Sandbox command environment must be an object")
  const env = {}
  for (const [key, entry] of Object.entries(value)) {
    if (!ENV_KEY.test(key) || typeof entry !== "string" || entry.includes(NUL)) {
      throw new TypeError("Sandbox command environment contains an invalid entry")
    }
    env[key] = entry
  }
  return Object.freeze(env)
}

/** A validated, frozen command for a Sandbox runtime. Build one with `SandboxCommand.from`. */
export class SandboxCommand {
  constructor(args, command, cwd, env, signal, timeoutMs) {
    this.args = args
    this.command = command
    this.cwd = cwd
    this.env = env
    this.signal = signal
    if (timeoutMs !== undefined) this.timeoutMs = timeoutMs
    Object.freeze(this)
  }

  /**
   * Validates `command`, `args` and `options` against the acquisition `request`: `cwd`
   * defaults to `request.cwd` and must stay inside `request.root`, `signal` defaults to
   * `request.signal`, and an aborted signal throws its reason.
   */
  static from(request, command, args = [], options = {}) {
    if (typeof command !== "string" || command.length === 0 || command.includes(NUL)) {
      throw new TypeError("Sandbox command must be a non-empty string without null bytes")
    }
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string" && !arg.includes(NUL))) {
      throw new TypeError("Sandbox command arguments must be strings without null bytes")
    }
    if (!isPlainObject(options)) throw new TypeError("Sandbox command options must be an object")
    const cwd = options.cwd ?? request.cwd
    const problem = cwdProblem(cwd, request.root)
    if (problem === "not-normalized") {
      throw new TypeError("Sandbox command cwd must be a normalized relative forward-slash path")
    }
    if (problem === "outside") throw new TypeError("Sandbox command cwd resolves outside its configured root")
    const env = readEnv(options.env)
    const timeoutMs = options.timeoutMs
    if (timeoutMs !== undefined && !isTimerDelay(timeoutMs)) {
      throw new RangeError("Sandbox command timeoutMs must be a positive timer-safe integer")
    }
    const signal = options.signal ?? request.signal
    throwIfAborted(signal)
    return new SandboxCommand(Object.freeze([...args]), command, cwd, env, signal, timeoutMs)
  }
}
