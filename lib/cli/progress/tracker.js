// What `aml run`'s progress display knows about a run, built only from the runtime's public
// trace events (`runtime.on("trace", …)`, docs/CLI.md "Progress"): the Agents, Scripts and
// outer Sandbox and Workspace boundaries that are open now, and what has finished, for the
// summary line. Pure bookkeeping: no terminal, no clock of its own (times are passed in).

const NOUNS = { agent: ["Agent", "Agents"], script: ["Script", "Scripts"], sandbox: ["Sandbox", "Sandboxes"], workspace: ["Workspace", "Workspaces"] }

/** The kind of row a `span.start` opens, or undefined for spans the display does not show. */
function rowKind(event) {
  if (event.kind === "agent") return event.name === "Agent" ? "agent" : undefined
  if (event.kind === "script") return "script"
  // A nested <Sandbox> is a view of its parent's lease: nothing is acquired.
  if (event.kind === "sandbox") return event.attributes.nested === true ? undefined : "sandbox"
  if (event.kind === "workspace") return "workspace"
  return undefined
}

export class ProgressTracker {
  /** spanId → parentSpanId, for every open span (to find a row's descendants). */
  #parents = new Map()
  /** spanId → `{ kind, label, detail, startedAt, acquired }`, in opening order. */
  rows = new Map()
  /** kind → `{ done, failed, replayed }` over finished rows. */
  finished = new Map()

  /** Applies one trace event at time `now` (ms); returns whether the display changed. */
  apply(event, now) {
    if (event.type === "span.start") return this.#start(event, now)
    if (event.type === "span.end") return this.#end(event)
    return false
  }

  #start(event, now) {
    this.#parents.set(event.spanId, event.parentSpanId)
    let changed = this.#markAcquired(event.parentSpanId)
    const attributes = event.attributes
    // An Agent's provider and model appear on its agent.session span; its turns on agent.turn.
    if (event.kind === "agent" && event.name === "agent.session") {
      const row = this.rows.get(event.parentSpanId)
      if (row !== undefined) {
        row.detail = [attributes.provider, attributes.model].filter((part) => typeof part === "string").join(" ")
        return true
      }
    }
    if (event.kind === "agent" && event.name === "agent.turn" && typeof attributes.index === "number" && attributes.index > 1) {
      const row = this.rows.get(this.#parents.get(event.parentSpanId))
      if (row !== undefined) {
        row.turn = attributes.index
        return true
      }
    }
    const kind = rowKind(event)
    if (kind === undefined) return changed
    const detail = kind === "script" ? (attributes.command ?? attributes.shell) : undefined
    this.rows.set(event.spanId, {
      kind,
      label: kind === "agent" ? `Agent ${event.spanId}` : NOUNS[kind][0],
      detail: typeof detail === "string" ? detail : undefined,
      startedAt: now,
      // Sandboxes and Workspaces are "acquiring" until something runs inside them.
      acquired: kind !== "sandbox" && kind !== "workspace",
    })
    return true
  }

  // The first span inside an open Sandbox or Workspace means its lease was acquired.
  #markAcquired(spanId) {
    let changed = false
    for (let id = spanId; id !== undefined; id = this.#parents.get(id)) {
      const row = this.rows.get(id)
      if (row !== undefined && !row.acquired) {
        row.acquired = true
        changed = true
      }
    }
    return changed
  }

  #end(event) {
    this.#parents.delete(event.spanId)
    const row = this.rows.get(event.spanId)
    if (row === undefined) return false
    this.rows.delete(event.spanId)
    let counts = this.finished.get(row.kind)
    if (counts === undefined) this.finished.set(row.kind, (counts = { done: 0, failed: 0, replayed: 0 }))
    counts.done++
    if (event.status === "error") counts.failed++
    if (event.attributes["journal.replayed"] === true) counts.replayed++
    return true
  }

  /** `3 Agents (1 replayed), 1 Script, 1 Sandbox`, or "" when nothing ran. */
  summary() {
    const parts = []
    for (const kind of Object.keys(NOUNS)) {
      const counts = this.finished.get(kind)
      if (counts === undefined) continue
      const notes = []
      if (counts.failed > 0) notes.push(`${counts.failed} failed`)
      if (counts.replayed > 0) notes.push(`${counts.replayed} replayed`)
      const noun = NOUNS[kind][counts.done === 1 ? 0 : 1]
      parts.push(`${counts.done} ${noun}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`)
    }
    return parts.join(", ")
  }
}
