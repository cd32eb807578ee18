// The pump between a Sandbox's SandboxProcess (Web streams, wait(), kill()) and a native ACP
// session over an external process (src/acp/external.rs). The session owns the protocol;
// this only moves bytes and facts: stdout/stderr chunks in (each feed awaits the session's
// capacity, so a slow session stops us reading the guest), stdin bytes out, the exit in,
// and the session's kill request out to `kill()`, whose failure is kept for cleanup. A
// rejected `wait()` (not an exit) is kept too: the session's wait failure rethrows it.

import { constants } from "node:os"

import {
  acpExternalEnd,
  acpExternalExited,
  acpExternalFeed,
  acpExternalInput,
  acpExternalKilled,
  acpExternalKillRequested,
} from "../../core/native.js"

const SIGNAL = /from signal (SIG[A-Z0-9]+)/

async function pipeIn(handle, which, stream) {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      if (!(await acpExternalFeed(handle, which, chunk))) break
    }
    // The session stopped reading (it ended): let the guest's writes fail rather than block.
    await reader.cancel().catch(() => {})
  } catch {
    // A broken stream ends that pipe; the process exit explains the rest.
  } finally {
    try {
      acpExternalEnd(handle, which)
    } catch {
      // The session handle is already released.
    }
  }
}

async function pipeOut(handle, stdin) {
  const writer = stdin.getWriter()
  try {
    for (;;) {
      const bytes = await acpExternalInput(handle)
      if (bytes === null) break
      await writer.write(bytes)
    }
    await writer.close()
  } catch {
    // The guest closed its stdin or died; the exit race reports why.
    await writer.abort().catch(() => {})
  }
}

function exitOf(outcome) {
  if (outcome.error === undefined) return [outcome.value.exitCode, null, null]
  const message = outcome.error?.message ?? String(outcome.error)
  const signal = SIGNAL.exec(message)?.[1]
  if (signal !== undefined && constants.signals[signal] !== undefined) return [null, constants.signals[signal], null]
  return [null, null, message]
}

/**
 * Connects `child` to the native session `handle`. `done` settles when every pipe, the exit
 * report and the kill have finished; `killErrors` holds a failed kill(); `waitFailure()` is
 * `wait()`'s rejection once it was reported to the session as a wait failure (not a signal).
 */
export function pumpSandboxProcess(handle, child) {
  const killErrors = []
  let waitFailure
  const exited = child.wait().then(
    (value) => ({ value }),
    (error) => ({ error }),
  )
  const reported = exited.then((outcome) => {
    const exit = exitOf(outcome)
    if (exit[2] !== null) waitFailure = { error: outcome.error }
    try {
      acpExternalExited(handle, ...exit)
    } catch {
      // Released already.
    }
  })
  const killed = acpExternalKillRequested(handle)
    .then(() => child.kill())
    .catch((error) => void killErrors.push(error))
    .finally(() => {
      try {
        acpExternalKilled(handle)
      } catch {
        // Released already.
      }
    })
  const done = Promise.allSettled([
    pipeIn(handle, 1, child.stdout),
    pipeIn(handle, 2, child.stderr),
    pipeOut(handle, child.stdin),
    reported,
    killed,
  ])
  return { done, killErrors, waitFailure: () => waitFailure }
}
