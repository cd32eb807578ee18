// createFileJournal(path, { workflow }): the durable AmlJournal (docs/JOURNAL.md). The file
// work is Rust's (crates/aml-journal): open with torn-tail repair and the workflow check,
// then one fsync'd line per settled step. append() is synchronous on purpose: the record of
// a settled step must be on disk before the workflow moves on, or a crash right after could
// re-run it. Entries are indexed natively as they are read and appended (lib/journal/entry-index.js).

import { resolve } from "node:path"

import { builtInJournal, JournalIndex } from "./entry-index.js"
import { isNormalized } from "../checks/normalized.js"
import { journalFileAppend, journalFileOpen } from "../core/native.js"

function native(call) {
  try {
    return call()
  } catch (error) {
    // Keep the Rust message, drop napi's status code: this is a plain Error of AML's.
    throw new Error(error.message)
  }
}

/** Opens (or creates) the journal file at `path`; throws when it belongs to another workflow. */
export function createFileJournal(path, options) {
  if (typeof path !== "string" || path.length === 0) throw new TypeError("File journal path must be a non-empty string")
  if (typeof options !== "object" || options === null) throw new TypeError("File journal options must be an object")
  const workflow = options.workflow
  if (!isNormalized(workflow)) throw new TypeError("File journal workflow must be a non-empty normalized string")
  const absolute = resolve(path)
  const opened = native(() => journalFileOpen(absolute, workflow))
  // Indexed natively (lib/journal/entry-index.js), so a retry replays settled Agents in the engine.
  const index = new JournalIndex()
  for (const record of opened.records) index.add(JSON.parse(record))
  const journal = Object.freeze({
    path: absolute,
    workflow,
    /** Whether opening dropped a torn last record (a crash during its write). */
    repaired: opened.torn,
    entries: () => index.entries(),
    append(entry) {
      native(() => journalFileAppend(absolute, JSON.stringify(entry)))
      index.add(entry)
    },
  })
  return builtInJournal(journal, index)
}
