// One journaled evaluation (docs/JOURNAL.md): the loaded entries by key, the structural
// position of every task, the real provider call budget, and durable recording.
//
// Keys are positions, never span ids or object identities (those depend on timing): the
// engine describes a task's frame stack (crates/aml-engine/src/position.rs) and each task
// carries its origin, the position that created it plus the ordinal of that creation (the
// nth nested evaluate() of a component, Parallel branch n, Loop iteration n).

import { EvaluationError } from "./errors.js"
import { journalPosition } from "./native.js"

const KINDS = new Set(["agent", "tool"])

/** Validates one stored entry; a journal holding anything else is refused, not guessed at. */
function checkEntry(entry) {
  if (
    typeof entry !== "object" ||
    entry === null ||
    typeof entry.key !== "string" ||
    typeof entry.digest !== "string" ||
    !KINDS.has(entry.kind) ||
    typeof entry.value !== "object" ||
    entry.value === null
  ) {
    throw new TypeError("AML journal entries must be { key, digest, kind, value } records")
  }
  return entry
}

export class JournalSession {
  constructor(domain, journal, maxAgentCalls) {
    this.domain = domain
    this.journal = journal
    this.maxAgentCalls = maxAgentCalls
    /** Real provider calls so far (maxAgentCalls counts only these). */
    this.calls = 0
    this.entries = new Map()
    /** Task id → origin prefix. Task ids are reused: every creation overwrites its entry. */
    this.origins = new Map()
    /** Position → how many tasks / Tool calls it created so far. */
    this.ordinals = new Map()
    const native = domain.native
    const plain = native.newTask
    native.newTask = (parent) => {
      const task = plain.call(native, parent)
      this.origins.set(task, parent === null ? "" : `${this.#next(parent, "e")}/`)
      return task
    }
  }

  async load() {
    const loaded = await this.journal.entries()
    if (loaded === undefined || loaded === null || typeof loaded[Symbol.iterator] !== "function") {
      throw new TypeError("AML journal entries() must return an iterable")
    }
    // A key recorded twice (a divergent step re-recorded) answers with its latest entry.
    for (const entry of loaded) this.entries.set(entry?.key, checkEntry(entry))
  }

  /** The unique position of the top of `task`. */
  position(task) {
    return (this.origins.get(task) ?? "") + journalPosition(this.domain.native.id, task)
  }

  /** The next ordinal creation of kind `tag` ("e": task, "t": Tool call) from `task`. */
  #next(task, tag) {
    const at = `${this.position(task)}${tag}`
    const n = this.ordinals.get(at) ?? 0
    this.ordinals.set(at, n + 1)
    return `${at}${n}`
  }

  toolKey(task) {
    return `tool:${this.#next(task, "t")}`
  }

  agentKey(task) {
    return `agent:${this.position(task)}`
  }

  /** The recorded entry of `key` with this `kind`, or undefined. */
  lookup(key, kind) {
    const entry = this.entries.get(key)
    return entry !== undefined && entry.kind === kind ? entry : undefined
  }

  /** A real provider call is about to start: the budget counts it (LIM-1 message). */
  reserveCall(spanId) {
    const max = this.maxAgentCalls
    if (max !== 0 && this.calls >= max) {
      throw new EvaluationError(`AML evaluation exceeded maxAgentCalls ${max} at Agent ${spanId}`)
    }
    this.calls++
  }

  /** Appends a settled step; a journal whose append returns a promise is awaited. */
  record(key, kind, digest, value) {
    // Not indexed here: every position is looked up once per evaluation, before it records.
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
