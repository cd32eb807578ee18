// Reading <Skill src> (a trusted application read from AmlRuntimeOptions.cwd): one UTF-8
// file, or one complete package directory with a SKILL.md. The package walk, the bounded
// reads and the SKILL.md frontmatter are Rust (crates/aml-files/src/skill_package.rs and
// skill_manifest.rs): the package is read once into a snapshot that stays native, so the
// Agent later gets exactly what was checked; staging it is skill-staging.js. Every await is
// raced against the evaluation's signal (the native walk also stops at the abort), and an
// abort rethrows `signal.reason` unchanged (SK-1).

import { randomUUID } from "node:crypto"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { getSystemErrorMap } from "node:util"

import { EvaluationError } from "./errors.js"
import { cancellationCancel, cancellationCreate, cancellationRelease, skillPackageRead } from "./native.js"

/** Bounds of one package (enforced in Rust): entries (files, directories, links) and total file bytes. */
export const MAX_PACKAGE_ENTRIES = 1000
export const MAX_PACKAGE_BYTES = 16 * 1024 * 1024

// Strict UTF-8 that keeps a byte order mark, like `readFile(path, "utf8")` but failing
// instead of substituting U+FFFD.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** SK-1 read failure, or the abort reason unchanged when the evaluation was cancelled. */
export function readFailure(domain, absolute, cause) {
  const signal = domain.signal
  if (signal.aborted) return signal.reason
  return new EvaluationError(`<Skill> could not read local file "${absolute}"`, { cause })
}

/** The error `node:fs` would have thrown for a native fault (`code`, negative `errno`, …). */
export function fsError(fault) {
  if (fault.errno === undefined || fault.errno === null) return new Error(fault.message)
  const [code, description] = getSystemErrorMap().get(-fault.errno) ?? [`errno ${fault.errno}`, "unknown error"]
  const error = new Error(`${code}: ${description}, ${fault.syscall} '${fault.real}'`)
  error.errno = -fault.errno
  error.code = code
  error.syscall = fault.syscall
  error.path = fault.real
  return error
}

/** The file form: the whole file as strict UTF-8. */
export async function readUtf8(domain, absolute) {
  let bytes
  try {
    bytes = await domain.race(readFile(absolute, { signal: domain.signal }))
  } catch (error) {
    throw readFailure(domain, absolute, error)
  }
  try {
    return UTF8.decode(bytes)
  } catch (cause) {
    throw readFailure(domain, absolute, cause)
  }
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

/** Reads the package natively; the walk stops at the evaluation's abort. */
async function readSnapshot(domain, absolute) {
  const signal = domain.signal
  if (signal.aborted) throw signal.reason
  const token = cancellationCreate()
  const cancel = () => cancellationCancel(token)
  signal.addEventListener("abort", cancel, { once: true })
  try {
    return await domain.race(skillPackageRead(absolute, token))
  } finally {
    signal.removeEventListener("abort", cancel)
    cancellationRelease(token)
  }
}

/**
 * The package form: `absolute` is a directory. Returns `{ entry, root, snapshot }`: `entry`
 * is the frozen `AgentSkill` for `request.skills` (its `path` is where the package will be
 * staged, chosen now so the fallback text can name it), `root` the invocation-private
 * directory created at staging time, `snapshot` the native package bytes.
 */
export async function readPackage(domain, absolute) {
  const read = await readSnapshot(domain, absolute)
  if (typeof read.kind === "string") throw packageFailure(domain, read)
  // A fresh random name: nothing exists there yet, and staging creates it exclusively.
  const root = join(tmpdir(), `aml-skill-${randomUUID()}`)
  const path = join(root, read.name)
  const entry = Object.freeze({ name: read.name, description: read.description, path })
  return { entry, root, snapshot: read }
}
