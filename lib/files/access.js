// The nearest active filesystem of a <File> or <Include path> (docs-next "What runs
// where"): an active Sandbox guest wins over the Workspace materialization, because the
// guest is the live execution state. Host writes and reads go through the confined Rust
// operations of crates/aml-files (confined), and so are those of a Sandbox whose guest files
// are host files (local, Docker bind mount); other guests through the Sandbox runtime (guest-file.js); the
// trusted application reads of `src` through crates/aml-files (lib/files/native-read.js).
// Outcomes are data (`{ kind, segment?, code?, message?, content? }`); callers word them.

import { posix, resolve } from "node:path"

import { EvaluationError } from "../errors/errors.js"
import { readGuestFile, writeGuestFile } from "./guest-file.js"
import { fsReadFile, fsReadFileBeneath, fsWriteFile, fsWriteFileBeneath, sourceFileRead } from "../core/native.js"
import { hostFilesOf } from "../sandbox/host-files.js"
import { fsError, nativeRead } from "./native-read.js"
import { resolvePortablePath } from "../sandbox/portable-path.js"

/**
 * Where `path` lives: `{ sandbox, workspace, path }` with `path` normalized relative to the
 * Sandbox session root or the Workspace materialization root. `label` is "<File>" or
 * "<Include>"; the portable-path messages use `${label} path`.
 */
export function locate(label, value, env) {
  const resolved = resolvePortablePath(`${label} path`, value, ".")
  if (resolved === "." || value.endsWith("/")) throw new EvaluationError(`${label} path must identify a file`)
  return { path: posix.normalize(resolved), sandbox: env.sandbox, workspace: env.workspace }
}

/** The Error cause of an I/O outcome: its message, with the errno `code` when known. */
export function outcomeCause(outcome) {
  const cause = new Error(outcome.message ?? "file operation failed")
  if (outcome.code !== undefined && outcome.code !== null) cause.code = outcome.code
  return cause
}

// A Sandbox whose guest files are host files (lib/sandbox/host-files.js) is written and
// read from the host, beneath its root, by the same Rust as the Workspace; any other guest
// through its runtime.
export function writeAt(domain, target, content) {
  const session = target.sandbox
  if (session !== undefined) {
    const host = hostFilesOf(session)
    if (host === undefined) return domain.race(writeGuestFile(session, target.path, content, domain.signal))
    return domain.race(fsWriteFileBeneath(host.base, host.root, target.path, content))
  }
  return domain.race(fsWriteFile(target.workspace.directory, target.path, content))
}

export function readAt(domain, target) {
  const session = target.sandbox
  if (session !== undefined) {
    const host = hostFilesOf(session)
    if (host === undefined) return domain.race(readGuestFile(session, target.path, domain.signal))
    return domain.race(fsReadFileBeneath(host.base, host.root, target.path))
  }
  return domain.race(fsReadFile(target.workspace.directory, target.path))
}

/**
 * A trusted application read (`<File src>`, `<Include src>`): resolved from
 * AmlRuntimeOptions.cwd, absolute paths stay absolute, lexical scopes do not rewrite it.
 * Resolves with `{ absolute, content }` (bytes); a failure is
 * `${label} could not read local file "<absolute>"` with the cause (the reason on abort).
 */
export async function readSource(domain, label, src) {
  const absolute = resolve(domain.options.cwd, src)
  let read
  try {
    read = await nativeRead(domain, sourceFileRead, absolute)
  } catch (cause) {
    if (domain.signal.aborted) throw domain.signal.reason
    throw new EvaluationError(`${label} could not read local file "${absolute}"`, { cause })
  }
  if (Buffer.isBuffer(read)) return { absolute, content: read }
  if (read.kind === "cancelled") throw domain.signal.reason
  throw new EvaluationError(`${label} could not read local file "${absolute}"`, { cause: fsError(read) })
}
