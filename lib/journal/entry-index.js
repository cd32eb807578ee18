// The native index of a journal's entries (src/journal/index.rs, docs/JOURNAL.md): what lets
// a replayed Agent be answered inside the engine (src/hot_path/journal.rs) without a request or a
// provider call. The built-in journals (lib/journal/memory.js, lib/journal/file.js) keep one for
// their whole life, brought up to date with their appends when an evaluation starts; any
// other journal's entries are indexed once per evaluation (lib/journal/session.js).
//
// An entry is filed with its slot (its index in the journal's list of entries, where the
// facade finds it again) and, for a plain-text Agent answer, its text.

import {
  JournalIndexHandle,
  journalIndexAdd,
  journalIndexFileRecorded,
  journalIndexRecorded,
  journalIndexSlots,
  journalRecordFinish,
  journalRecordText,
} from "../core/native.js"

const KINDS = new Set(["agent", "tool"])
export const INVALID_ENTRIES = "AML journal entries must be { key, digest, kind, value } records"

/** Whether `entry` is a `{ key, digest, kind, value }` record. */
export function isEntry(entry) {
  return (
    typeof entry === "object" &&
    entry !== null &&
    typeof entry.key === "string" &&
    typeof entry.digest === "string" &&
    KINDS.has(entry.kind) &&
    typeof entry.value === "object" &&
    entry.value !== null
  )
}

/** The text the engine may replay by itself: a plain `{ text }` Agent answer. */
function replayText(entry) {
  if (entry.kind !== "agent") return undefined
  const value = entry.value
  // A step with usage replays through the facade, which reports it to the engine (issue 37).
  if (value.structured !== undefined || value.stateCalls !== undefined || value.usage !== undefined) return undefined
  const text = value.text
  return typeof text === "string" ? text : undefined
}

/**
 * A step the runtime recorded into a built-in memory journal (JournalIndex.record): made
 * the frozen entry append() would have received only when someone reads it (entries(), a
 * facade replay), so recording a step costs no objects or freezes of its own.
 */
class Recorded {
  constructor(key, digest, kind, value) {
    this.key = key
    this.digest = digest
    this.kind = kind
    this.value = value
  }
}

/**
 * The list's placeholder for a plain-text Agent answer recorded natively (recordText): the
 * answer lives in the native index until someone reads it, so recording one adds no JS
 * object for the garbage collector to copy while the evaluation runs.
 */
const NATIVE = Object.freeze({})

export class JournalIndex {
  constructor() {
    // The handle owns the native slot (freed when it is collected); `id` is read once
    // because the raw calls take a plain number.
    this.handle = new JournalIndexHandle()
    this.id = this.handle.id
    /** The journal's entries; an entry's slot is its index here. */
    this.list = []
    /** How many of `list` are filed natively (or were found not to be records). */
    this.indexed = 0
    /** Set when an entry was not a record: evaluations with this journal reject. */
    this.invalid = false
    /** Set by the memory journal: the runtime records with record(), not append(). */
    this.deferred = false
    /**
     * Set once the native index numbers the slots (since a recording-only evaluation,
     * lib/journal/session.js; for good, so an evaluation still recording is never cut off
     * by another one starting): the engine records one-call Agents with no call of ours,
     * so `list` catches up (catchUp) before it is read or appended to.
     */
    this.numbered = false
  }

  /** Pads `list` with the answers the engine recorded by itself since (their slots). */
  catchUp() {
    if (!this.numbered) return
    const slots = journalIndexSlots(this.id, false)
    while (this.list.length < slots) this.list.push(NATIVE)
  }

  /** Caught up and, while numbered, the next slot taken for an entry pushed now. */
  takeSlot() {
    if (!this.numbered) return
    const slot = journalIndexSlots(this.id, true)
    while (this.list.length < slot) this.list.push(NATIVE)
  }


  /**
   * Appends `entry`. It is filed when the next evaluation starts (sync): a recording run
   * looks each position up once, before it records, so appends need no index until then.
   */
  add(entry) {
    this.takeSlot()
    this.list.push(entry)
  }

  /** A settled step recorded by the runtime (a memory journal's append, deferred). */
  record(key, digest, kind, value) {
    this.takeSlot()
    this.list.push(new Recorded(key, digest, kind, value))
  }

  /**
   * The plain-text answer `text` of the Agent on top of `task` in evaluation `domain`,
   * recorded natively with the key and digest its lookup left in the engine.
   */
  recordText(domain, task, text) {
    this.catchUp()
    journalRecordText(domain, this.id, task, text, this.list.length)
    this.list.push(NATIVE)
  }

  /**
   * recordText for a one-call Agent (lib/agents/direct.js) whose answer also lands in the same
   * engine call; the step code of finishTextAgent. Nothing is recorded when it throws.
   */
  recordFinishText(domain, task, text, traced) {
    this.catchUp()
    const code = journalRecordFinish(domain, this.id, task, text, traced, this.list.length)
    this.list.push(NATIVE)
    return code
  }

  /** The entry at `slot`, made a frozen entry once if the runtime recorded it. */
  at(slot) {
    if (slot >= this.list.length) this.catchUp()
    const entry = this.list[slot]
    let made
    if (entry === NATIVE) {
      const [key, digest, text] = journalIndexRecorded(this.id, slot)
      made = Object.freeze({ digest, key, kind: "agent", value: Object.freeze({ text }) })
    } else if (entry instanceof Recorded) {
      made = Object.freeze({ digest: entry.digest, key: entry.key, kind: entry.kind, value: Object.freeze(entry.value) })
    } else {
      return entry
    }
    this.list[slot] = made
    return made
  }

  /**
   * The record lines of the entries not recorded natively, with their slots: the native side
   * copies and formats the others itself (src/runs/recorder.rs), so none is built here.
   */
  facadeLines() {
    this.catchUp()
    const slots = []
    const lines = []
    for (let slot = 0; slot < this.list.length; slot++) {
      if (this.list[slot] === NATIVE) continue
      slots.push(slot)
      lines.push(JSON.stringify(this.at(slot)))
    }
    return { count: this.list.length, slots, lines }
  }

  /** Every entry, in order (a frozen array). */
  entries() {
    this.catchUp()
    const list = this.list
    for (let slot = 0; slot < list.length; slot++) if (list[slot] === NATIVE || list[slot] instanceof Recorded) this.at(slot)
    return Object.freeze([...list])
  }

  /** Files the entries appended since the last sync (a later entry for a key wins). */
  sync() {
    this.catchUp()
    const list = this.list
    for (let slot = this.indexed; slot < list.length; slot++) {
      const entry = list[slot]
      if (entry === NATIVE) {
        // A run of natively recorded answers is filed in one call, in slot order.
        let end = slot + 1
        while (end < list.length && list[end] === NATIVE) end++
        journalIndexFileRecorded(this.id, slot, end)
        slot = end - 1
      } else if (entry instanceof Recorded || isEntry(entry)) {
        // A runtime-recorded step is a record by construction: filed as it is.
        journalIndexAdd(this.id, entry.key, entry.digest, entry.kind, replayText(entry), slot)
      } else {
        this.invalid = true
      }
    }
    this.indexed = list.length
    if (this.invalid) throw new TypeError(INVALID_ENTRIES)
  }
}

/** Built-in journal object → its JournalIndex (the fast replay path). */
const BUILT_IN = new WeakMap()

/** Registers `journal` as a built-in over `index`; returns `journal`. */
export function builtInJournal(journal, index) {
  BUILT_IN.set(journal, index)
  return journal
}

/** The index of a built-in journal, or undefined for any other journal object. */
export function builtInIndex(journal) {
  return BUILT_IN.get(journal)
}
