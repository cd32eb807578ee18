// Helpers shared by the two host process paths, spawnLocalProcess (PA-8) and <Script> host
// execution (SC-1): the child environment, signal names and Node-shaped spawn errors.

import { existsSync } from "node:fs"
import { constants } from "node:os"
import { getSystemErrorName } from "node:util"

/**
 * The complete child environment `{...process.env, ...env, PWD: cwd}` as flat
 * `[key, value, …]` pairs. It is built here rather than inherited in Rust so the spawner
 * thread never reads `environ` while this thread might be writing it (`process.env.X = …`
 * calls setenv). Like Node's spawn, `undefined` values are skipped and others stringified.
 */
export function childEnv(env, cwd) {
  const pairs = []
  const merged = env === undefined || env === null ? process.env : { ...process.env, ...env }
  for (const key in merged) {
    if (key === "PWD") continue
    const value = merged[key]
    if (value !== undefined) pairs.push(key, String(value))
  }
  pairs.push("PWD", cwd)
  return pairs
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]))

/** "SIGTERM" for 15; the number as text for a signal Node has no name for. */
export function signalName(number) {
  return SIGNAL_NAMES.get(number) ?? String(number)
}

/**
 * The error Node's `child_process.spawn` would emit for a failed start (`spawn <command>
 * ENOENT`, with `code`, negative `errno`, `syscall`, `path`, `spawnargs`), so callers that
 * inspect `code === "ENOENT"` keep working. A missing cwd also reports ENOENT in Node, which
 * reads like a missing command; the message says which it was.
 */
export function spawnError(command, args, cwd, fault) {
  if (fault.errno === undefined || fault.errno === null) return new Error(fault.message)
  let code
  try {
    code = getSystemErrorName(-fault.errno)
  } catch {
    code = `errno ${fault.errno}`
  }
  const missingCwd = code === "ENOENT" && !existsSync(cwd)
  const detail = missingCwd ? `: cwd "${cwd}" does not exist` : ""
  const error = new Error(`spawn ${command} ${code}${detail}`)
  error.errno = -fault.errno
  error.code = code
  error.syscall = `spawn ${command}`
  error.path = command
  error.spawnargs = [...args]
  return error
}
