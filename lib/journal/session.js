// One journaled evaluation (docs/JOURNAL.md): the journal's entries (a native index,
// lib/journal/entry-index.js), the real provider call budget, and durable recording.
//
// Keys are positions, never span ids or object identities (those depend on timing): the
// engine describes a task's frame stack and prefixes it with the task's origin, the
// position that created it plus the ordinal of that creation (the nth nested evaluate() of
// a component, Parallel branch n, Loop iteration n; crates/aml-engine/src/position.rs).

import { EvaluationError } from "../errors/errors.js"
import { builtInIndex, INVALID_ENTRIES, isEntry, JournalIndex } from "./entry-index.js"
import { journalAgent, journalEnable, journalIndexSlot, journalRecordInto, journalStep, journalStepTake, journalToolKey } from "../core/native.js"

export class JournalSession {
  constructor(domain, journal, maxAgentCalls) {
    this.domain = domain
    this.journal = journal
    this.maxAgentCalls = maxAgentCalls
    /** Real provider calls so far (maxAgentCalls counts only these). */
    this.calls = 0
    /** The journal's JournalIndex, once load() ran. */
    this.index = undefined
    /**
     * The lookup status of the Agent runAgent is handing over (lib/journal/agent.js): -1 (no
     * entry), -2 (a divergence) or the slot of a matching entry the facade replays. Set
     * and consumed within one synchronous stretch; the key and digest stay in the engine
     * (stepIdentity).
     */
    this.step = undefined
    /** A built-in memory journal's index, recorded into directly (JournalIndex.record). */
    this.recorder = undefined
    /**
     * Set by load() when the journal is a built-in memory journal with no entries (what
     * `aml run` keeps for "re-run from here"): nothing can replay, so one-call text Agents
     * take the plain path and the engine records them (src/hot_path/recorded_steps.rs).
     */
    this.recordOnly = false
    journalEnable(domain.native.id)
  }

  async load() {
    // A built-in journal keeps its index: only entries appended since are filed.
    const kept = builtInIndex(this.journal)
    if (kept !== undefined) {
      kept.sync()
      this.index = kept
      if (kept.deferred) {
        this.recorder = kept
        // Caught up by sync(): an empty list is an index with nothing recorded.
        if (kept.list.length === 0) {
          journalRecordInto(this.domain.native.id, kept.id, 0)
          kept.numbered = true
          this.recordOnly = true
        }
      }
      return
    }
    const loaded = await this.journal.entries()
    if (loaded === undefined || loaded === null || typeof loaded[Symbol.iterator] !== "function") {
      throw new TypeError("AML journal entries() must return an iterable")
    }
    // A key recorded twice (a divergent step re-recorded) answers with its latest entry.
    const index = new JournalIndex()
    for (const entry of loaded) {
      if (!isEntry(entry)) throw new TypeError(INVALID_ENTRIES)
      index.add(entry)
    }
    index.sync()
    this.index = index
  }

  /**
   * The engine's look at the ready Agent on top of `task` (src/hot_path/journal.rs): a step code
   * (≥ 0) when it replayed the Agent itself, else the lookup status as -1, -2 or -3 - slot.
   * `extra` is the text of what only JS holds (lib/journal/digest.js).
   */
  agentStep(task, extra) {
    return journalAgent(this.domain.native.id, this.index.id, task, extra)
  }

  /** `[key, digest]` of the Agent on top of `task` whose lookup said it runs or replays here. */
  stepIdentity(task) {
    return journalStep(this.domain.native.id, task)
  }

  toolKey(task) {
    return journalToolKey(this.domain.native.id, task)
  }

  /** The recorded entry of `key` with this `kind`, or undefined. */
  lookup(key, kind) {
    const slot = journalIndexSlot(this.index.id, key, kind)
    return slot < 0 ? undefined : this.index.at(slot)
  }

  /** The entry at `slot` of the journal's list. */
  entry(slot) {
    return this.index.at(slot)
  }

  /** A real provider call is about to start: the budget counts it (LIM-1 message). */
  reserveCall(spanId) {
    const max = this.maxAgentCalls
    if (max !== 0 && this.calls >= max) {
      throw new EvaluationError(`AML evaluation exceeded maxAgentCalls ${max} at Agent ${spanId}`)
    }
    this.calls++
  }

  /**
   * Records the plain-text answer of the Agent on top of `task` (its lookup left the key
   * and digest in the engine). A built-in memory journal keeps it natively; any other
   * journal gets an entry, as record() appends it.
   */
  recordText(task, text) {
    const recorder = this.recorder
    if (recorder !== undefined) {
      recorder.recordText(this.domain.native.id, task, text)
      return undefined
    }
    const [key, digest] = this.stepIdentity(task)
    return this.record(key, "agent", digest, { text })
  }

  /**
   * Records the one-call answer `value` (a text with usage, which the engine's lean entry
   * has no room for) of the Agent on top of `task` in a recording-only evaluation; the
   * engine then skips it as it lands.
   */
  recordOwnStep(task, value) {
    const [key, digest] = journalStepTake(this.domain.native.id, task)
    this.record(key, "agent", digest, value)
  }

  /** Appends a settled step; a journal whose append returns a promise is awaited. */
  record(key, kind, digest, value) {
    // Not filed in this run's index: every position is looked up once per evaluation,
    // before it records (a built-in journal files it when the next evaluation starts).
    // A built-in memory journal takes the step as it is (made an entry when read).
    const recorder = this.recorder
    if (recorder !== undefined) {
      recorder.record(key, digest, kind, value)
      return undefined
    }
    const entry = Object.freeze({ digest, key, kind, value: Object.freeze(value) })
    const appended = this.journal.append(entry)
    return appended !== null && typeof appended?.then === "function" ? appended : undefined
  }

  replayed(spanId, parentSpanId, kind, key) {
    this.domain.point(spanId, parentSpanId, "journal.replay", { key, kind })
  }

  diverged(spanId, parentSpanId, kind, key) {
    this.domain.point(spanId, parentSpanId, "journal.divergence", { key, kind })
  }
}
