// Portable logical paths (INVENTORY SB-1): the paths AML resolves inside a Sandbox or
// Workspace root (`<Sandbox root|cwd>`, `<Agent cwd>`, `<Script cwd>`, `<File path>`…) are
// relative, forward-slash and traversal-free, so they mean the same thing on every host and
// guest. `label` names the prop in the error ("<Sandbox> root"). The checks and Node's
// `posix.join` are in Rust (crates/aml-files/src/portable_path.rs); a string crosses as
// UTF-8, as it would to any file-system call.

import { EvaluationError } from "../errors/errors.js"
import { portablePathResolve } from "../core/native.js"

/** `posix.join(base, value)` after the four SB-1 checks; throws EvaluationError. */
export function resolvePortablePath(label, value, base) {
  if (typeof value !== "string") throw new EvaluationError(`${label} must be a non-empty string`)
  const { path, problem } = portablePathResolve(value, base)
  if (problem !== undefined && problem !== null) throw new EvaluationError(`${label} ${problem}`)
  return path
}
