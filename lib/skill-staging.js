// Invocation-private staging of <Skill> packages (docs-next "What runs where"). A package
// read by its <Skill> is written out only for the provider call of the Agent it belongs to,
// and removed when that call settles — success, failure or abort — before the Agent span
// closes. Staging at call time (not when the Skill completes) means an Agent that never
// runs (a sibling failed, the run was cancelled while queued) leaves nothing on disk.
//
// Layout: `<os.tmpdir()>/aml-skill-<uuid>/<name>/…`, the `<uuid>` directory created with
// mode 0700 and without `recursive`, so a pre-existing path fails instead of being reused.

import { mkdir, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"

import { EvaluationError } from "./errors.js"

const CLEANUP_FAILED = "AML evaluation and resource cleanup both failed"

async function stage(domain, pkg, created) {
  const path = pkg.entry.path
  try {
    await domain.race(mkdir(pkg.root, { mode: 0o700 }))
    // Only a directory this call created is ever removed.
    created.push(pkg.root)
    await domain.race(mkdir(path, { mode: 0o700 }))
    for (const dir of pkg.dirs) await domain.race(mkdir(join(path, dir), { mode: 0o700 }))
    for (const file of pkg.files) {
      const mode = file.executable ? 0o700 : 0o600
      await domain.race(writeFile(join(path, file.rel), file.content, { flag: "wx", mode }))
    }
  } catch (cause) {
    if (domain.signal.aborted) throw domain.signal.reason
    // Oversized <Include> files share this staging (include.js) and say so.
    const what = pkg.include ? `<Include> could not stage "${pkg.staged}"` : `<Skill> could not stage package "${pkg.entry.name}" at "${path}"`
    throw new EvaluationError(what, { cause })
  }
  // The snapshot was used once; the staged copy is what the Agent reads from now on.
  pkg.dirs = undefined
  pkg.files = undefined
}

/** Removes every created root; runs to the end even after an abort. Returns an error or undefined. */
async function remove(created) {
  let failure
  for (const root of created) {
    try {
      await rm(root, { force: true, recursive: true })
    } catch (cause) {
      failure ??= new EvaluationError(`<Skill> could not remove staged packages at "${root}"`, { cause })
    }
  }
  return failure
}

/**
 * Stages `packages` (from the domain's Skill table), runs `run()` — the provider call —
 * and removes the staged copies before settling like `run()`. A staging failure means the
 * provider is never called. A removal failure fails the Agent; if the call failed too, both
 * are reported as AggregateError("AML evaluation and resource cleanup both failed").
 */
export async function withStagedSkills(domain, packages, run) {
  const created = []
  let result
  let failed = false
  let error
  try {
    for (const pkg of packages) await stage(domain, pkg, created)
    result = await run()
  } catch (caught) {
    failed = true
    error = caught
  }
  const cleanup = await remove(created)
  if (cleanup !== undefined) throw failed ? new AggregateError([error, cleanup], CLEANUP_FAILED) : cleanup
  if (failed) throw error
  return result
}
