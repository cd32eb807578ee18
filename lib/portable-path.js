// Portable logical paths (INVENTORY SB-1): the paths AML resolves inside a Sandbox or
// Workspace root (`<Sandbox root|cwd>`, `<Agent cwd>`, `<Script cwd>`, `<File path>`…) are
// relative, forward-slash and traversal-free, so they mean the same thing on every host and
// guest. `label` names the prop in the error ("<Sandbox> root").

import { posix, win32 } from "node:path"

import { EvaluationError } from "./errors.js"

/** `posix.join(base, value)` after the four SB-1 checks; throws EvaluationError. */
export function resolvePortablePath(label, value, base) {
  if (typeof value !== "string" || value.trim().length === 0) {
    throw new EvaluationError(`${label} must be a non-empty string`)
  }
  if (value.includes("\\") || posix.isAbsolute(value) || win32.isAbsolute(value)) {
    throw new EvaluationError(`${label} must be a relative forward-slash path`)
  }
  // Checked on the authored segments, before normalisation could fold "a/../b" into "b".
  if (value.split("/").includes("..")) throw new EvaluationError(`${label} cannot contain parent traversal`)
  const resolved = posix.join(base, value)
  const root = posix.normalize(base)
  const inside =
    root === "."
      ? resolved !== ".." && !resolved.startsWith("../") && !posix.isAbsolute(resolved)
      : resolved === root || resolved.startsWith(root.endsWith("/") ? root : `${root}/`)
  if (!inside) throw new EvaluationError(`${label} cannot escape its parent root`)
  return resolved
}
