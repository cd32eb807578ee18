// Reading <Skill src> (a trusted application read from AmlRuntimeOptions.cwd): one UTF-8
// file, or one complete package directory with a SKILL.md. Both are one native read
// (crates/aml-files/src/source_read.rs; the package walk, the bounded reads and the SKILL.md
// frontmatter are skill_package.rs and skill_manifest.rs): a package is read once into a
// snapshot that stays native, so the Agent later gets exactly what was checked; staging it
// is skill-staging.js. The read is raced against the evaluation's signal (the native walk
// also stops at the abort), and an abort rethrows `signal.reason` unchanged (SK-1).

import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { EvaluationError } from "../errors/errors.js"
import { skillSourceRead } from "../core/native.js"
import { fsError, nativeRead } from "../files/native-read.js"

/** SK-1 read failure, or the abort reason unchanged when the evaluation was cancelled. */
export function readFailure(domain, absolute, cause) {
  const signal = domain.signal
  if (signal.aborted) return signal.reason
  return new EvaluationError(`<Skill> could not read local file "${absolute}"`, { cause })
}

function packageFailure(domain, fault) {
  switch (fault.kind) {
    case "evaluation":
      return new EvaluationError(fault.message)
    case "utf8":
      return readFailure(domain, fault.path, new TypeError("The encoded data was not valid for encoding utf-8"))
    case "cancelled":
      return domain.signal.reason
    default:
      return readFailure(domain, fault.path, fsError(fault))
  }
}

/**
 * Reads `<Skill src>` at `absolute`: `{ text }` for the file form (strict UTF-8, a byte
 * order mark kept), or `{ pkg }` for a package directory. `pkg` is `{ entry, root,
 * snapshot }`: `entry` is the frozen `AgentSkill` for `request.skills` (its `path` is where
 * the package will be staged, chosen now so the fallback text can name it), `root` the
 * invocation-private directory created at staging time, `snapshot` the native package bytes.
 */
export async function readSkillSource(domain, absolute) {
  const read = await nativeRead(domain, skillSourceRead, absolute)
  if (typeof read === "string") return { text: read }
  if (typeof read.kind === "string") throw packageFailure(domain, read)
  // A fresh random name: nothing exists there yet, and staging creates it exclusively.
  const root = join(tmpdir(), `aml-skill-${randomUUID()}`)
  const path = join(root, read.name)
  const entry = Object.freeze({ name: read.name, description: read.description, path })
  return { pkg: { entry, root, snapshot: read } }
}
