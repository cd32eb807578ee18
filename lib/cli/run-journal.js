// `aml run --journal <file>` (docs/CLI.md "Resuming with --journal"): the run's file journal
// (docs/JOURNAL.md, createFileJournal). The file is named by the user; the workflow id it is
// checked against is the workflow's absolute path and the export that was run, so the same
// command finds its own journal and a journal of another workflow (or export) is refused
// with the journal's own message instead of replaying answers that belong elsewhere.
import { resolve } from "node:path"

import { journalFileCut } from "../core/native.js"

/**
 * Opens `file` (relative to `cwd`) with the SDK's `createFileJournal`; returns
 * `{ journal, path, steps, keptLine() }`, `steps` the number of recorded steps (distinct
 * keys: a key recorded twice is one step whose later entry wins) and `keptLine()` the line
 * for after a failure, counted then.
 */
export function openRunJournal(createFileJournal, file, cwd, workflowPath, exportName) {
  const path = resolve(cwd, file)
  const journal = createFileJournal(path, { workflow: `${workflowPath}#${exportName}` })
  return { journal, path, steps: recordedSteps(journal), keptLine: () => keptLine(path, journal) }
}

function recordedSteps(journal) {
  const keys = new Set()
  for (const entry of journal.entries()) keys.add(entry.key)
  return keys.size
}

const steps = (count) => `${count} recorded ${count === 1 ? "step" : "steps"}`

/** The stderr line of a rerun that finds recorded steps. */
export function resumeLine(path, count) {
  return `aml: resuming from journal ${path} (${steps(count)})`
}

/** The stderr line after a failed journaled run: what a rerun of the same command will skip. */
function keptLine(path, journal) {
  return `aml: journal ${path} keeps ${steps(recordedSteps(journal))}; run the same command again to resume`
}

/**
 * `--from <step>` (docs/CLI.md "Re-running from a step"): cuts the journal file just before
 * `step` (its key; records after it are dropped too: they settled later) and returns the
 * stderr line saying so. Throws the journal's own error for an unknown step or workflow.
 */
export function cutRunJournal(file, cwd, workflowPath, exportName, step) {
  const path = resolve(cwd, file)
  let cut
  try {
    cut = journalFileCut(path, `${workflowPath}#${exportName}`, step)
  } catch (error) {
    throw new Error(error.message)
  }
  return `aml: journal ${path} cut before step ${step} (${steps(cut[0])} kept, ${cut[1]} to run again)`
}
