// createMemoryJournal(): the in-memory AmlJournal (docs/JOURNAL.md). Keep the object to retry
// an evaluation in the same process; entries are frozen plain data.

/** An append-only in-memory journal, optionally seeded with `entries`. */
export function createMemoryJournal(entries) {
  const list = entries === undefined ? [] : [...entries]
  return Object.freeze({
    entries: () => Object.freeze([...list]),
    append(entry) {
      list.push(entry)
    },
  })
}
