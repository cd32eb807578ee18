// A process inside a Docker Sandbox container (BS-2 spawn) as a SandboxProcess: one exec
// with stdin attached (src/process/docker.rs), run through the documented wrapper
// `sh -c 'echo $$ > <marker>; exec "$@"' aml-spawn <cmd> <args…>`. A `docker exec` process
// leads its own process group, so the marker holds the group id and kill() is a second exec
// of `kill -s KILL -- -<pgid>` (the documented `kill -KILL -- -<pgid>` in the spelling dash accepts too): the whole tree inside the container dies, which closing the
// attach connection alone would not do. Streams are pull-based like spawnLocalProcess.
//
// Choices where the contract is silent (docs/DOCKER-SANDBOX.md):
// - wait() resolves the exit code the daemon reports; a killed group shows as 137
//   (128 + SIGKILL), as `docker exec` reports it. An aborted signal rejects with its reason.
// - kill() is memoised; a process that already exited makes it a no-op.

import { groupMarker, killGroupScript, recordLeaderArgv } from "../guest-group.js"

import { stopWhen } from "../../process/stop-when.js"
import { commandFailed } from "./engine.js"
import {
  dockerSpawn,
  dockerSpawnCloseStdin,
  dockerSpawnRead,
  dockerSpawnRelease,
  dockerSpawnWait,
  dockerSpawnWrite,
} from "../../core/native.js"

const abandoned = new FinalizationRegistry((handle) => dockerSpawnRelease(handle))

/** The handle is forgotten once the exec ended and both outputs were read to the end. */
class HandleState {
  constructor(handle) {
    this.handle = handle
    this.pending = 3
    this.released = false
    this.exited = false
  }

  done() {
    if (--this.pending === 0) this.release()
  }

  release() {
    if (this.released) return
    this.released = true
    abandoned.unregister(this)
    dockerSpawnRelease(this.handle)
  }
}

function outputStream(state, which) {
  let ended = false
  const end = () => {
    if (!ended) (ended = true), state.done()
  }
  return new ReadableStream({
    async pull(controller) {
      if (state.released) return controller.close()
      const chunk = await dockerSpawnRead(state.handle, which)
      if (chunk === null) {
        end()
        controller.close()
      } else controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    },
    cancel: end,
  })
}

function stdinStream(state) {
  const handle = state.handle
  const close = () => (state.released ? undefined : dockerSpawnCloseStdin(handle))
  return new WritableStream({
    async write(chunk) {
      if (state.released || state.exited) throw new Error("Docker Sandbox process input is closed")
      if (!ArrayBuffer.isView(chunk)) throw new TypeError("Docker Sandbox process stdin accepts only Uint8Array chunks")
      const outcome = await dockerSpawnWrite(handle, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      if (outcome.fault) throw commandFailed(outcome.fault)
      if (outcome.value === "closed") throw new Error("Docker Sandbox process input is closed")
    },
    close,
    abort: close,
  })
}


class DockerProcess {
  #signal
  #killing
  #waiting
  #settled
  #runKill

  constructor(state, signal, timeoutMs, runKill) {
    const handle = state.handle
    this.#signal = signal
    this.#runKill = runKill
    this.id = `docker-process:${handle}`
    this.stdin = stdinStream(state)
    this.stdout = outputStream(state, 1)
    this.stderr = outputStream(state, 2)
    let disarm
    this.#settled = dockerSpawnWait(handle).then((outcome) => {
      disarm()
      // A finished process reads nothing more: later writes get the documented error.
      state.exited = true
      state.done()
      return { aborted: signal?.aborted === true, outcome }
    })
    disarm = stopWhen(signal, timeoutMs, () => this.kill().catch(() => {}))
    Object.freeze(this)
  }

  /** Kills the process group inside the container; the same promise on every call. */
  kill() {
    this.#killing ??= this.#runKill()
    return this.#killing
  }

  /** `{ exitCode }`, memoised; the abort reason when the signal aborted it. */
  wait() {
    this.#waiting ??= this.#settled.then(({ aborted, outcome }) => {
      if (aborted) throw this.#signal.reason
      if (outcome.fault) throw commandFailed(outcome.fault)
      return Object.freeze({ exitCode: Number(outcome.value) })
    })
    return this.#waiting
  }
}

/**
 * Starts `command` in the container through the marker wrapper. `exec(argv)` runs a
 * one-shot command in the same container (used for the kill).
 */
export async function spawnDockerProcess(engine, containerId, spec, launch, exec) {
  const marker = groupMarker()
  const argv = recordLeaderArgv(marker, [spec.command, ...spec.args])
  const body = JSON.stringify({ cmd: argv, env: spec.env, workingDir: spec.workingDir })
  const outcome = await dockerSpawn(engine.socket, engine.version, containerId, body)
  if (outcome.fault) throw commandFailed(outcome.fault)
  const state = new HandleState(Number(outcome.value))
  const runKill = () => exec(["sh", "-c", killGroupScript(marker)])
  const child = new DockerProcess(state, launch.signal, launch.timeoutMs, runKill)
  abandoned.register(child, state.handle, state)
  return { child, state }
}
