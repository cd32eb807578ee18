// Reading <Skill src> (a trusted application read from AmlRuntimeOptions.cwd): one UTF-8
// file, or one complete package directory with a SKILL.md. A package is read into memory
// once, bounded, so the Agent later gets exactly the snapshot that was checked; staging it
// is skill-staging.js. Every await is raced against the evaluation's signal, and an abort
// rethrows `signal.reason` unchanged (SK-1).
//
// "Its root" for a package is the package directory itself (after resolving links in
// `src`): every entry must lie inside it. A link whose target resolves outside is refused,
// as are links to directories (no cycles to chase), sockets, FIFOs and devices. Links to
// files inside the package are staged as copies.

import { randomUUID } from "node:crypto"
import { readdir, readFile, realpath, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join, relative, sep } from "node:path"

import { EvaluationError } from "./errors.js"
import { parseSkillManifest } from "./skill-frontmatter.js"

/** Bounds of one package: entries (files, directories, links) and total file bytes. */
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

async function io(domain, absolute, promise) {
  try {
    return await domain.race(promise)
  } catch (error) {
    throw readFailure(domain, absolute, error)
  }
}

function decode(domain, absolute, bytes) {
  try {
    return UTF8.decode(bytes)
  } catch (cause) {
    throw readFailure(domain, absolute, cause)
  }
}

/** The file form: the whole file as strict UTF-8. */
export async function readUtf8(domain, absolute) {
  const bytes = await io(domain, absolute, readFile(absolute, { signal: domain.signal }))
  return decode(domain, absolute, bytes)
}

/** Whether `target` is `root` or lies below it (a name like "..x" is below it). */
function inside(root, target) {
  const rel = relative(root, target)
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}

/** Walks the package breadth-first (parents before children), in sorted name order. */
async function walk(domain, absolute, root) {
  const fail = (message) => new EvaluationError(`<Skill> package "${absolute}" ${message}`)
  const dirs = []
  const files = []
  let entries = 0
  let bytes = 0
  const queue = [""]
  while (queue.length > 0) {
    const dir = queue.shift()
    const listing = await io(domain, join(absolute, dir), readdir(join(root, dir), { withFileTypes: true }))
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const dirent of listing) {
      if (++entries > MAX_PACKAGE_ENTRIES) throw fail(`has more than ${MAX_PACKAGE_ENTRIES} entries`)
      // Relative paths use "/" in messages and in the staged tree alike.
      const rel = dir === "" ? dirent.name : `${dir}/${dirent.name}`
      let source = join(root, rel)
      if (dirent.isDirectory()) {
        dirs.push(rel)
        queue.push(rel)
        continue
      }
      if (dirent.isSymbolicLink()) {
        source = await io(domain, join(absolute, rel), realpath(source))
        if (!inside(root, source)) throw fail(`entry "${rel}" links outside the package`)
      } else if (!dirent.isFile()) {
        throw fail(`entry "${rel}" must be a regular file, a directory, or a link to a file in the package`)
      }
      const info = await io(domain, join(absolute, rel), stat(source))
      if (!info.isFile()) {
        throw fail(`entry "${rel}" must be a regular file, a directory, or a link to a file in the package`)
      }
      // Checked before reading (from the size) and after (the file may have grown).
      if (bytes + info.size > MAX_PACKAGE_BYTES) throw fail(`is larger than ${MAX_PACKAGE_BYTES} bytes`)
      const content = await io(domain, join(absolute, rel), readFile(source, { signal: domain.signal }))
      bytes += content.length
      if (bytes > MAX_PACKAGE_BYTES) throw fail(`is larger than ${MAX_PACKAGE_BYTES} bytes`)
      files.push({ content, executable: (info.mode & 0o111) !== 0, rel })
    }
  }
  return { dirs, files }
}

/**
 * The package form: `absolute` is a directory. Returns `{ entry, root, dirs, files }`:
 * `entry` is the frozen `AgentSkill` for `request.skills` (its `path` is where the package
 * will be staged, chosen now so the fallback text can name it), `root` the invocation-
 * private directory created at staging time.
 */
export async function readPackage(domain, absolute) {
  const root = await io(domain, absolute, realpath(absolute))
  const manifestPath = join(absolute, "SKILL.md")
  let manifestInfo
  try {
    manifestInfo = await domain.race(stat(join(root, "SKILL.md")))
  } catch (error) {
    if (error?.code !== "ENOENT" || domain.signal.aborted) throw readFailure(domain, manifestPath, error)
  }
  if (manifestInfo === undefined || !manifestInfo.isFile()) {
    throw new EvaluationError(`<Skill> src directory "${absolute}" must contain a SKILL.md file`)
  }
  const { dirs, files } = await walk(domain, absolute, root)
  const manifest = files.find((file) => file.rel === "SKILL.md")
  const parsed = parseSkillManifest(decode(domain, manifestPath, manifest.content))
  if (parsed.problem !== undefined) {
    throw new EvaluationError(`<Skill> package "${absolute}" has an invalid SKILL.md: ${parsed.problem}`)
  }
  // A fresh random name: nothing exists there yet, and staging creates it exclusively.
  const path = join(tmpdir(), `aml-skill-${randomUUID()}`, parsed.name)
  const entry = Object.freeze({ name: parsed.name, description: parsed.description, path })
  return { dirs, entry, files, root: dirname(path) }
}
