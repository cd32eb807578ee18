// <Script> host execution (SC-1): one native exec per Script (src/process/exec.rs). The
// process runs from AmlRuntimeOptions.cwd (or the cwd prop resolved from it) as its own
// process group, with env `{...process.env, PWD: cwd}` and stdin closed. stdout and stderr
// share one 4 MiB budget; crossing it kills the tree. Every outcome — exit, overflow,
// timeout, cancellation — is reported only after the whole tree is dead and reaped.
//
// This is the documented spawnLocalProcess behaviour without its Web streams: a Script reads
// everything anyway, so one round trip replaces a read per chunk.
//
// Choices where the contract is silent (docs/ARCHITECTURE.md lists them):
// - A command that cannot start (missing, not executable, missing cwd) fails with
//   `EvaluationError('<Script> could not start "<command>"')`; the cause is Node's spawn
//   error shape (`code: "ENOENT"`, `errno`, `syscall`, `path`, `spawnargs`).
// - `timeoutMs` elapsing kills the tree and fails with
//   `EvaluationError("<Script> timed out after <n> ms")`.
// - A leader ended by a signal fails with `EvaluationError("<Script> exited from signal
//   SIGKILL")`, plus `: <trimmed stderr>` when there is any, like a non-zero exit.

import { EvaluationError } from "../errors/errors.js"
import { childEnv, signalName, spawnError } from "./host-process.js"
import { cancellationCancel, cancellationCreate, cancellationRelease, processExec } from "../core/native.js"

/** The shared stdout+stderr bound of host Scripts. */
export const HOST_OUTPUT_LIMIT = 4 * 1024 * 1024

function withStderr(message, stderr) {
  const detail = stderr.trim()
  return detail.length > 0 ? `${message}: ${detail}` : message
}

function failure(plan, args, fault, signal) {
  switch (fault.kind) {
    case "cancelled":
      return signal.reason
    case "output-limit":
      return new RangeError(`<Script> host output exceeded ${HOST_OUTPUT_LIMIT} bytes`)
    case "timeout":
      return new EvaluationError(`<Script> timed out after ${plan.timeoutMs} ms`)
    case "spawn":
      return new EvaluationError(`<Script> could not start "${plan.command}"`, {
        cause: spawnError(plan.command, args, plan.cwd, fault),
      })
    default:
      return new EvaluationError(`<Script> could not run "${plan.command}"`, { cause: new Error(fault.message) })
  }
}

/**
 * Runs the plan on the host; resolves with `{ exitCode, stderr, stdout }` (decoded as UTF-8,
 * invalid bytes replaced) or throws the errors above. An abort kills the tree, waits for it
 * to be reaped, and rethrows `signal.reason`.
 */
export async function runOnHost(domain, plan, args) {
  const signal = domain.signal
  let token = null
  let onAbort
  if (domain.abortable) {
    if (signal.aborted) throw signal.reason
    token = cancellationCreate()
    onAbort = () => cancellationCancel(token)
    signal.addEventListener("abort", onAbort, { once: true })
  }
  let outcome
  try {
    let running
    try {
      const env = childEnv(undefined, plan.cwd)
      running = processExec(plan.command, args, plan.cwd, env, plan.timeoutMs, HOST_OUTPUT_LIMIT, token)
    } catch (error) {
      // The exec never started, so it will not release the token itself.
      if (token !== null) cancellationRelease(token)
      throw error
    }
    outcome = await running
  } finally {
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort)
  }
  const fault = outcome.fault
  if (fault !== undefined && fault !== null) throw failure(plan, args, fault, signal)
  const stdout = outcome.stdout.toString("utf8")
  const stderr = outcome.stderr.toString("utf8")
  if (outcome.signal !== null && outcome.signal !== undefined) {
    throw new EvaluationError(withStderr(`<Script> exited from signal ${signalName(outcome.signal)}`, stderr))
  }
  return { exitCode: outcome.exitCode, stderr, stdout }
}
