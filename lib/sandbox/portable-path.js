// Portable logical paths (INVENTORY SB-1): the paths AML resolves inside a Sandbox or
// Workspace root (`<Sandbox root|cwd>`, `<Agent cwd>`, `<Script cwd>`, `<File path>`…) are
// relative, forward-slash and traversal-free, so they mean the same thing on every host and
// guest. `label` names the prop in the error ("<Sandbox> root"). The checks and Node's
// `posix.join` are in Rust (crates/aml-files/src/portable_path.rs); a string crosses as
// UTF-8, as it would to any file-system call.

import { posix } from "node:path"

import { EvaluationError } from "../errors/errors.js"
import { portablePathResolve } from "../core/native.js"

/** `posix.join(base, value)` after the four SB-1 checks; throws EvaluationError. */
export function resolvePortablePath(label, value, base) {
  if (typeof value !== "string") throw new EvaluationError(`${label} must be a non-empty string`)
  const { path, problem } = portablePathResolve(value, base)
  if (problem !== undefined && problem !== null) throw new EvaluationError(`${label} ${problem}`)
  return path
}

/**
 * Where a command whose logical cwd is `cwd` runs in a guest whose logical `root` is mounted
 * at `guestRoot`: `guestRoot/<cwd relative to root>`, or `undefined` when `cwd` is not `root`
 * or below it. One rule for every guest (Docker, remote providers).
 */
export function guestCwd(guestRoot, root, cwd) {
  const rel = posix.relative(posix.normalize(root), posix.normalize(cwd))
  if (rel === ".." || rel.startsWith("../") || posix.isAbsolute(rel)) return undefined
  return rel === "" ? guestRoot : `${guestRoot}/${rel}`
}
