// Invocation-private staging of <Skill> packages (docs-next "What runs where"). A package
// read by its <Skill> is written out only for the provider call of the Agent it belongs to,
// and removed when that call settles — success, failure or abort — before the Agent span
// closes. Staging at call time (not when the Skill completes) means an Agent that never
// runs (a sibling failed, the run was cancelled while queued) leaves nothing on disk.
//
// The file work is Rust (crates/aml-files/src/skill_staging.rs): layout
// `<os.tmpdir()>/aml-skill-<uuid>/<name>/…`, the `<uuid>` directory created with mode 0700
// and without `recursive`, so a pre-existing path fails instead of being reused. A staging
// that fails or is cancelled removes what it created before it reports.

import { withCleanupFailure } from "../errors/cleanup-failure.js"
import { EvaluationError } from "../errors/errors.js"
import { cancellationCancel, cancellationCreate, cancellationRelease, includeStage, skillPackageRemove, skillPackageStage } from "../core/native.js"
import { fsError } from "../files/native-read.js"

/**
 * Stages one package, or the one file of an oversized `<Include>` (include.js builds that
 * `pkg`), by the same Rust rules. Not raced: the native step stops at the abort (a token)
 * and cleans up after itself, so nothing it created can outlive the rejection.
 */
async function stage(domain, pkg, created) {
  const signal = domain.signal
  if (signal.aborted) throw signal.reason
  const token = cancellationCreate()
  const cancel = () => cancellationCancel(token)
  signal.addEventListener("abort", cancel, { once: true })
  let fault
  try {
    fault = pkg.include
      ? await includeStage(pkg.root, pkg.file.name, pkg.file.content, token)
      : await skillPackageStage(pkg.snapshot, pkg.root, token)
  } finally {
    signal.removeEventListener("abort", cancel)
    cancellationRelease(token)
  }
  if (fault === null || fault === undefined) {
    // Only a directory this call created is ever removed.
    created.push(pkg.root)
    // The snapshot was used once; the staged copy is what the Agent reads from now on.
    pkg.snapshot = undefined
    pkg.file = undefined
    if (signal.aborted) throw signal.reason
    return
  }
  if (fault.kind === "cancelled" || signal.aborted) throw signal.reason
  if (pkg.include) throw new EvaluationError(`<Include> could not stage "${pkg.staged}"`, { cause: fsError(fault) })
  const { name, path } = pkg.entry
  throw new EvaluationError(`<Skill> could not stage package "${name}" at "${path}"`, { cause: fsError(fault) })
}

/** Removes every created root; runs to the end even after an abort. Returns an error or undefined. */
async function remove(created) {
  let failure
  for (const root of created) {
    const fault = await skillPackageRemove(root)
    if (fault !== null && fault !== undefined) {
      failure ??= new EvaluationError(`<Skill> could not remove staged packages at "${root}"`, { cause: fsError(fault) })
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
  if (cleanup !== undefined) throw failed ? withCleanupFailure(domain.signal, error, cleanup) : cleanup
  if (failed) throw error
  return result
}
