// spawnLocalProcess (INVENTORY PA-8): a host process as a SandboxProcess with Web streams.
//
// The process is supervised in Rust (crates/aml-process): it leads its own process group,
// kill() terminates the whole tree (SIGTERM, a 2 s grace period, SIGKILL) and resolves only
// once every member is dead and reaped, and the host reaps orphans of the tree, so nothing
// survives as a process or a zombie. The streams are pull-based: each `pull` is one native
// read and each `write` one native write, so a finished process holds no reference that
// keeps Node alive.
//
// Choices where the contract is silent (docs/ARCHITECTURE.md lists them):
// - kill() is memoised: every call returns the same promise, and `beforeKill` runs once.
// - A kill by signal shows in wait() with the signal that ended the leader, usually
//   `SIGTERM` ("Local process exited from signal SIGTERM"), `SIGKILL` after the grace period.
// - Once the leader has exited and both output streams have ended (or been cancelled), the
//   handle is released: members still left in its process group (background jobs) are torn
//   down then. Dropping every reference to the process and its streams does the same.

import {
  processCloseOutput,
  processCloseStdin,
  processKill,
  processRead,
  processRelease,
  processSpawn,
  processWait,
  processWrite,
} from "../core/native.js"
import { childEnv, signalName, spawnError } from "./host-process.js"
import { stopWhen } from "./stop-when.js"

const PIPES_FAILED = "Local process transport failed to create process pipes"

/** Backstop: a process nobody references any more is released (its tree torn down). */
const abandoned = new FinalizationRegistry((handle) => processRelease(handle))

/** Throws what kill() collected: nothing, the one failure, or all of them aggregated. */
export function cleanupFailure(errors) {
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, "Process cleanup failed")
}

/** The native handle and what is known about it; shared by the process and its streams. */
class HandleState {
  constructor(handle) {
    this.handle = handle
    this.released = false
    this.exited = false
    this.openOutputs = 2
  }

  outputDone() {
    this.openOutputs--
    this.releaseIfDone()
  }

  releaseIfDone() {
    if (this.released || !this.exited || this.openOutputs > 0) return
    this.released = true
    abandoned.unregister(this)
    processRelease(this.handle)
  }
}

function outputStream(state, which) {
  let done = false
  const finish = () => {
    if (done) return
    done = true
    state.outputDone()
  }
  return new ReadableStream({
    async pull(controller) {
      let chunk
      try {
        chunk = await processRead(state.handle, which)
      } catch (error) {
        finish()
        throw error
      }
      if (chunk === null) {
        finish()
        controller.close()
      } else {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      }
    },
    cancel() {
      if (!state.released) processCloseOutput(state.handle, which)
      finish()
    },
  })
}

function stdinStream(state) {
  const close = () => {
    if (!state.released) processCloseStdin(state.handle)
  }
  return new WritableStream({
    start(controller) {
      // `abort()` waits for an in-flight write before calling the sink's abort, and a write
      // to a child that never reads never finishes: the controller's signal fires at once.
      controller.signal?.addEventListener("abort", close, { once: true })
    },
    write(chunk) {
      if (!ArrayBuffer.isView(chunk)) throw new TypeError("Local process stdin accepts only Uint8Array chunks")
      return processWrite(state.handle, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    },
    close,
    abort: close,
  })
}

class LocalProcess {
  #state
  #beforeKill
  #signal
  #killing
  #waiting
  #settled

  constructor(state, pid, beforeKill, signal, timeoutMs) {
    this.#state = state
    this.#beforeKill = beforeKill
    this.#signal = signal
    this.id = `local-process:${pid}`
    this.stdin = stdinStream(state)
    this.stdout = outputStream(state, 1)
    this.stderr = outputStream(state, 2)
    let disarm
    // Watched from the start: the exit decides release, the timer and the abort listener.
    this.#settled = processWait(state.handle).then(
      (exit) => {
        disarm()
        state.exited = true
        state.releaseIfDone()
        return { aborted: signal?.aborted === true, exit }
      },
      (error) => ({ aborted: false, exit: { fault: { message: error.message } } }),
    )
    disarm = stopWhen(signal, timeoutMs, () => this.kill().catch(() => {}))
    Object.freeze(this)
  }

  /** Runs `beforeKill`, then terminates the process tree; the same promise on every call. */
  kill() {
    this.#killing ??= this.#terminate()
    return this.#killing
  }

  async #terminate() {
    const errors = []
    if (this.#beforeKill !== undefined) {
      try {
        await this.#beforeKill()
      } catch (error) {
        errors.push(error)
      }
    }
    const state = this.#state
    if (!state.released) {
      try {
        await processKill(state.handle)
      } catch (error) {
        // Released while the kill was in flight: the tree is already being torn down.
        if (!state.released) errors.push(error)
      }
    }
    cleanupFailure(errors)
  }

  /** The exit, memoised: `{ exitCode }`, or the abort reason, or the killing signal. */
  wait() {
    this.#waiting ??= this.#settled.then(({ aborted, exit }) => {
      if (aborted) throw this.#signal.reason
      if (exit.fault) throw new Error(exit.fault.message)
      if (exit.signal !== null && exit.signal !== undefined) {
        throw new Error(`Local process exited from signal ${signalName(exit.signal)}`)
      }
      return Object.freeze({ exitCode: exit.exitCode })
    })
    return this.#waiting
  }
}

/**
 * Starts `command` with `args` on the host, in `options.cwd`, as its own process group.
 * Rejects with `options.signal.reason` when already aborted and with Node's spawn error
 * (`code: "ENOENT"`, …) when the process cannot start.
 */
export async function spawnLocalProcess(command, args = [], options) {
  const { beforeKill, cwd, env, signal, timeoutMs } = options
  signal?.throwIfAborted()
  const argv = [...args]
  const started = await processSpawn(command, argv, cwd, childEnv(env, cwd), undefined, undefined)
  const fault = started.fault
  if (fault !== undefined && fault !== null) {
    if (fault.kind === "spawn") throw spawnError(command, argv, cwd, fault)
    throw new Error(PIPES_FAILED, { cause: new Error(fault.message) })
  }
  const state = new HandleState(started.handle)
  const child = new LocalProcess(state, started.pid, beforeKill, signal, timeoutMs)
  abandoned.register(state, started.handle, state)
  return child
}
