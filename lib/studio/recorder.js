// recordRuns(runtime, options): keeps every evaluation of `runtime` as a run under a runs
// directory (docs/STUDIO.md "What is recorded"). The trace arrives through the record-sink
// protocol (lib/observability/trace-sink.js), the runtime's cheap path: compact records,
// batched. Records are buffered and handed to Rust once per event-loop turn
// (crates/aml-runs: the files, the size cap, the confinement); a page polling the run sees
// them within that turn. Content (prompts, answers) is recorded only with `captureContent`,
// AML's consent rule for every trace consumer.

import { resolve } from "node:path"

import { runsAppend, runsCreate, runsWriteJournal, runsWriteMeta } from "../core/native.js"
import { TRACE_SINK } from "../observability/trace-sink.js"

/** The default runs directory, relative to the working directory. */
export const DEFAULT_RUNS_DIR = ".aml/runs"
/** The default cap of one run's events file (64 MiB; crates/aml-runs). */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024

const COUNTED = ["agent", "tool", "script"]

function checkOptions(options) {
  if (options === undefined) return {}
  if (typeof options !== "object" || options === null) throw new TypeError("recordRuns options must be an object")
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) throw new TypeError("recordRuns dir must be a non-empty string")
  if (options.captureContent !== undefined && typeof options.captureContent !== "boolean") throw new TypeError("recordRuns captureContent must be a boolean")
  if (options.maxBytes !== undefined && !(Number.isSafeInteger(options.maxBytes) && options.maxBytes > 0)) throw new TypeError("recordRuns maxBytes must be a positive integer")
  return options
}

class RecordedRun {
  constructor(dir, runId, meta, maxBytes) {
    this.dir = dir
    this.runId = runId
    this.meta = meta
    this.maxBytes = maxBytes
    this.records = []
    this.scheduled = false
    this.write(() => runsCreate(dir, runId, JSON.stringify(meta)))
  }

  add(record, control) {
    if (this.broken) return
    this.control = control
    if (this.meta.clockOffset === undefined) this.meta.clockOffset = control.clockOffset
    // An Agent's own span is named "Agent"; other spans of kind agent are its parts.
    if (record[0] === 0 && COUNTED.includes(record[3]) && (record[3] !== "agent" || record[4] === "Agent")) this.meta.counts[record[3]]++
    if (this.meta.truncated) return
    this.records.push(record)
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
  }

  /**
   * Writes what is buffered. Recording is diagnostics: a failure to write (the directory was
   * removed, the disk is full) stops recording this run and never fails the evaluation or
   * throws from a timer; it is reported once on stderr.
   */
  write(call) {
    if (this.broken) return
    try {
      call()
    } catch (error) {
      this.broken = true
      process.emitWarning(`AML run ${this.runId} is no longer recorded: ${error.message}`, { code: "AML_RUN_RECORDING" })
    }
  }

  flush() {
    this.scheduled = false
    this.write(() => this.append())
  }

  append() {
    if (this.records.length === 0 || this.meta.truncated) return
    // One line per flush, holding that turn's records as one JSON array: a single
    // JSON.stringify per batch costs a fraction of one per record (bench/studio.js).
    const chunk = `${JSON.stringify(this.records)}\n`
    this.records = []
    if (!runsAppend(this.dir, this.runId, chunk, this.maxBytes)) {
      this.meta.truncated = true
      runsWriteMeta(this.dir, this.runId, JSON.stringify(this.meta))
    }
  }

  finish(event, journal) {
    // `finish` listeners run before the root span closes and while the tree's last records
    // may still wait for their batch: take them now, so the counts and the final metadata
    // see the whole tree. The root span's end follows in the next batch (appended as usual).
    this.control?.flush()
    this.flush()
    this.write(() => this.complete(event, journal))
  }

  complete(event, journal) {
    const meta = this.meta
    meta.status = event.status === "ok" ? "success" : "error"
    meta.durationMs = Math.round((Date.now() - meta.startedAt) * 10) / 10
    if (event.status === "error") {
      const failure = event.failure
      meta.error = { kind: failure.kind, message: failure.message, retryable: failure.retryable }
    }
    if (journal !== undefined) {
      const records = [...journal.journal.entries()].map((entry) => JSON.stringify(entry))
      runsWriteJournal(resolve(this.dir, this.runId, "journal"), journal.workflow, records)
      meta.journal = true
    }
    runsWriteMeta(this.dir, this.runId, JSON.stringify(meta))
  }
}

/**
 * Records every evaluation of `runtime` under `options.dir` (default `.aml/runs`); returns a
 * function that stops recording. `context` is the CLI's: extra metadata for each run and the
 * journal to keep with it (`{ journal, workflow }`).
 */
function startRecording(runtime, options, context = {}) {
  const { dir = DEFAULT_RUNS_DIR, captureContent = false, maxBytes = DEFAULT_MAX_BYTES } = checkOptions(options)
  const root = resolve(dir)
  const runs = new Map()
  const sink = (runId, record, control) => {
    const run = runs.get(runId)
    if (run === undefined) return
    run.add(record, control)
    // The root span's end is the run's last record (after the finish listeners).
    if (record[0] === 1 && record[2] === "evaluation") runs.delete(runId)
  }
  const listener = () => {}
  Object.defineProperty(listener, "captureContent", { enumerable: true, value: captureContent })
  Object.defineProperty(listener, TRACE_SINK, { value: sink })
  const stops = [
    runtime.on("start", (event) => {
      const meta = { id: event.runId, status: "running", startedAt: Date.now(), counts: { agent: 0, tool: 0, script: 0 }, content: captureContent, ...context.meta }
      runs.set(event.runId, new RecordedRun(root, event.runId, meta, maxBytes))
    }),
    runtime.on("trace", Object.freeze(listener)),
    runtime.on("finish", (event) => {
      runs.get(event.runId)?.finish(event, context.journal)
    }),
  ]
  return () => {
    for (const stop of stops) stop()
  }
}

/**
 * Where `aml run` hands its context (run metadata, the journal) to the SDK copy it loaded:
 * a registry symbol, so the CLI needs no second copy of these modules.
 */
export const RECORD_CONTEXT = Symbol.for("@aml-jsx/sdk/run-record-context")

/** The public `recordRuns(runtime, options?)` (index.d.ts). */
export function recordRuns(runtime, options) {
  return startRecording(runtime, options, options?.[RECORD_CONTEXT])
}
