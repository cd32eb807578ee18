// createMemoryJournal(): the in-memory AmlJournal (docs/JOURNAL.md). Keep the object to retry
// an evaluation in the same process; entries are frozen plain data. Its entries are also
// indexed natively (lib/journal/entry-index.js), so a retry replays settled Agents inside the engine.

import { builtInJournal, JournalIndex } from "./entry-index.js"

/** An append-only in-memory journal, optionally seeded with `entries`. */
export function createMemoryJournal(entries) {
  const index = new JournalIndex()
  if (entries !== undefined) for (const entry of entries) index.add(entry)
  // The runtime records into it without building entries (JournalIndex.record).
  index.deferred = true
  const journal = Object.freeze({
    entries: () => index.entries(),
    append(entry) {
      index.add(entry)
    },
  })
  return builtInJournal(journal, index)
}
