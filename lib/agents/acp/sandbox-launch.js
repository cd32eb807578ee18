// ACP Agent launch inside a <Sandbox> (INVENTORY BA-0 "Launch, Sandbox mode"). Everything
// goes through the lease's SandboxRuntime, so any provider that implements exec() and spawn()
// (local, Docker, …) runs ACP Agents: the guest cwd is `pwd` run in the Sandbox cwd, the
// private state directory is `/tmp/aml-acp-<uuid>` in the guest, launch files are
// materialised with `printf` under `umask 077` and chmod 600/700, and the agent is
// `runtime.spawn()`ed. The returned process is pumped into a native session by
// lib/acp-sandbox-process.js.

import { randomUUID } from "node:crypto"

import { acpLaunchPathProblem } from "../../core/native.js"

const WRITE = 'umask 077 && printf %s "$AML_MATERIALIZED_FILE" > "$1"'
const MKDIR = 'umask 077 && mkdir -p -- "$1"'

const detail = (result) => (result.stderr.trim() === "" ? `exit code ${result.exitCode}` : result.stderr.trim())

/** The host bridge is reachable from the guest only when the guest is this host (else: the relay). */
export function sandboxReachesHost(sandbox) {
  return sandbox.lease.handle?.kind === "local"
}

/** The guest's physical cwd (`pwd` in the Sandbox cwd). */
export async function resolveGuestCwd(name, sandbox, signal) {
  const result = await sandbox.lease.runtime.exec("pwd", [], { cwd: sandbox.cwd, signal })
  if (result.exitCode !== 0) {
    throw new Error(`Agent provider "${name}" could not resolve its Sandbox cwd: ${result.stderr.trim()}`)
  }
  const cwd = result.stdout.trim()
  if (cwd === "") throw new Error(`Agent provider "${name}" Sandbox cwd resolved to an empty path`)
  return cwd
}

/** Creates the guest state directory. */
export async function createGuestState(name, sandbox, signal) {
  const directory = `/tmp/aml-acp-${randomUUID()}`
  const result = await sandbox.lease.runtime.exec("mkdir", ["-p", "-m", "700", "--", directory], {
    cwd: sandbox.cwd,
    signal,
  })
  if (result.exitCode !== 0) {
    throw new Error(`Agent provider "${name}" could not prepare writable state: ${detail(result)}`)
  }
  return directory
}

/** Removes the guest state directory; resolves with the error messages (none on success). */
export async function removeGuestState(name, sandbox, directory) {
  try {
    // Cleanup runs after an abort too: its own signal, not the (aborted) evaluation's.
    const signal = new AbortController().signal
    const result = await sandbox.lease.runtime.exec("rm", ["-rf", "--", directory], { cwd: sandbox.cwd, signal })
    return result.exitCode === 0 ? [] : [`Agent provider "${name}" state cleanup failed: ${detail(result)}`]
  } catch (error) {
    return [`Agent provider "${name}" state cleanup failed: ${error?.message ?? String(error)}`]
  }
}

// The path rule is the host launch files' own (aml_acp::path_problem); only the wording
// names the guest root.
function checkFile(file) {
  const problem = acpLaunchPathProblem(file.path)
  if (problem === "not-normalized") throw new TypeError("Sandbox materialized file path must be a normalized relative path")
  if (problem === "outside") throw new TypeError("Sandbox materialized file path must remain inside its root")
  if (file.content.includes("\0")) throw new TypeError("Sandbox materialized text file cannot contain a null byte")
}

/** Writes launch files under `root` in the guest (all checked before any is written). */
export async function materializeGuestFiles(sandbox, root, files, signal) {
  for (const file of files) checkFile(file)
  const runtime = sandbox.lease.runtime
  const run = (command, args, env) => runtime.exec(command, args, { cwd: sandbox.cwd, env, signal })
  for (const file of files) {
    const target = `${root}/${file.path}`
    const slash = target.lastIndexOf("/")
    if (slash > root.length) {
      const made = await run("sh", ["-c", MKDIR, "sh", target.slice(0, slash)])
      if (made.exitCode !== 0) throw new Error(`Could not prepare Sandbox file directory: ${detail(made)}`)
    }
    const written = await run("sh", ["-c", WRITE, "sh", target], { AML_MATERIALIZED_FILE: file.content })
    if (written.exitCode !== 0) throw new Error(`Could not materialize Sandbox file: ${detail(written)}`)
    const mode = await run("chmod", [file.executable ? "700" : "600", "--", target])
    if (mode.exitCode !== 0) throw new Error(`Could not set Sandbox file permissions: ${detail(mode)}`)
  }
}
