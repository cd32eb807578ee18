// recordRuns(runtime, options): keeps every evaluation of `runtime` as a run under a runs
// directory (docs/STUDIO.md "What is recorded"). The trace never visits JS: the runtime
// attaches the recorder's tap to each evaluation before its root span opens, the engine hands
// the tap every record as it is made, and the recorder's writer thread serializes and appends
// them (crates/aml-runs recorder.rs: the files, the size cap, the confinement). This file
// keeps what only JS knows: the run's metadata, its outcome, and the journal `aml run` gives
// it. Content (prompts, answers) is recorded only with `captureContent`, AML's consent rule
// for every trace consumer.

import { resolve } from "node:path"

import { runsRecorderClose, runsRecorderCreate, runsRecorderDispose, runsRecorderFinish, runsRecorderJournal, runsRecorderStart } from "../core/native.js"
import { RUN_RECORDERS } from "../core/runtime.js"
import { builtInIndex } from "../journal/entry-index.js"
import { traceClockOffset } from "../observability/trace-sink.js"

/** The default runs directory, relative to the working directory. */
export const DEFAULT_RUNS_DIR = ".aml/runs"
/** The default cap of one run's events file (64 MiB; crates/aml-runs). */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024

function checkOptions(options) {
  if (options === undefined) return {}
  if (typeof options !== "object" || options === null) throw new TypeError("recordRuns options must be an object")
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) throw new TypeError("recordRuns dir must be a non-empty string")
  if (options.captureContent !== undefined && typeof options.captureContent !== "boolean") throw new TypeError("recordRuns captureContent must be a boolean")
  if (options.maxBytes !== undefined && !(Number.isSafeInteger(options.maxBytes) && options.maxBytes > 0)) throw new TypeError("recordRuns maxBytes must be a positive integer")
  return options
}

/**
 * Recording is diagnostics: a run that cannot be recorded (the directory cannot be made, was
 * removed, the disk is full) runs on unrecorded, and the reason is reported once.
 */
function warn(runId, message) {
  process.emitWarning(`AML run ${runId} is no longer recorded: ${message}`, { code: "AML_RUN_RECORDING" })
}

class RunRecorder {
  constructor(dir, captureContent, maxBytes, context) {
    this.dir = dir
    this.captureContent = captureContent
    this.context = context
    this.handle = runsRecorderCreate(dir, maxBytes, captureContent)
    /** Recorded runs not closed yet: runId → `{ key, startedAt }`. */
    this.runs = new Map()
    /** Records still being completed by the writer (promises of closed runs). */
    this.closing = new Set()
    this.stopped = false
  }

  /** Called by the runtime before `domain`'s root span opens. */
  open(domain) {
    const runId = domain.runId
    const startedAt = Date.now()
    const meta = { id: runId, status: "running", startedAt, counts: { agent: 0, tool: 0, script: 0 }, content: this.captureContent, clockOffset: traceClockOffset(), ...this.context.meta }
    let key
    try {
      // The journal `aml run` made for the recorder (no --journal): its step points are the
      // record's alone, so --trace shows what an unrecorded run shows.
      const privateSteps = this.context.journal?.implicit === true
      key = runsRecorderStart(this.handle, domain.native.id, runId, JSON.stringify(meta), privateSteps)
    } catch (error) {
      warn(runId, error.message)
      return
    }
    this.runs.set(runId, { key, startedAt })
    domain.addRecorder(this, this.captureContent)
  }

  /** The `finish` listener: the outcome, and the journal `aml run` recorded with the run. */
  finish(event) {
    const run = this.runs.get(event.runId)
    if (run === undefined) return
    const patch = { status: event.status === "ok" ? "success" : "error", durationMs: Math.round((Date.now() - run.startedAt) * 10) / 10 }
    if (event.status === "error") {
      const failure = event.failure
      patch.error = { kind: failure.kind, message: failure.message, retryable: failure.retryable }
    }
    runsRecorderFinish(this.handle, run.key, JSON.stringify(patch))
    const journal = this.context.journal
    if (journal !== undefined) {
      // A built-in journal's natively recorded answers are taken by the native side as they
      // are; the writer formats and writes them all (the run's `journal` file).
      try {
        const index = builtInIndex(journal.journal)
        if (index !== undefined) {
          const { count, slots, lines } = index.facadeLines()
          runsRecorderJournal(this.handle, run.key, index.id, journal.workflow, count, slots, lines)
        } else {
          const lines = journal.journal.entries().map((entry) => JSON.stringify(entry))
          runsRecorderJournal(this.handle, run.key, null, journal.workflow, lines.length, lines.map((_, slot) => slot), lines)
        }
      } catch (error) {
        warn(event.runId, error.message)
      }
    }
  }

  /**
   * Called by the runtime after `domain`'s root span closed. The writer completes the record
   * off the JS thread; until it has, the pending promise keeps Node running.
   */
  close(domain) {
    const runId = domain.runId
    const run = this.runs.get(runId)
    if (run === undefined) return
    this.runs.delete(runId)
    const closing = runsRecorderClose(this.handle, domain.native.id, run.key).then(
      (problem) => {
        if (problem !== null) warn(runId, problem)
      },
      (error) => warn(runId, error.message),
    )
    this.closing.add(closing)
    closing.then(() => {
      this.closing.delete(closing)
      if (this.stopped && this.runs.size === 0 && this.closing.size === 0) this.dispose()
    })
  }

  /** Every run closed so far is complete on disk. */
  async settled() {
    while (this.closing.size > 0) await Promise.all(this.closing)
  }

  /** No new runs; the runs in progress are recorded to their end, then the writer goes. */
  stop() {
    if (!this.stopped) {
      this.stopped = true
      if (this.runs.size === 0 && this.closing.size === 0) this.dispose()
    }
    return this.settled()
  }

  dispose() {
    this.stopFinish()
    runsRecorderDispose(this.handle)
  }
}

/**
 * Records every evaluation of `runtime` under `options.dir` (default `.aml/runs`); returns a
 * function that stops recording (a run in progress is recorded to its end) and returns a
 * promise that resolves once every run recorded so far is complete on disk. `context` is the
 * CLI's: extra metadata for each run and the journal to keep with it (`{ journal, workflow }`).
 */
function startRecording(runtime, options, context = {}) {
  const { dir = DEFAULT_RUNS_DIR, captureContent = false, maxBytes = DEFAULT_MAX_BYTES } = checkOptions(options)
  const recorders = runtime?.[RUN_RECORDERS]
  if (!(recorders instanceof Set)) throw new TypeError("recordRuns runtime must be an AmlRuntime")
  const recorder = new RunRecorder(resolve(dir), captureContent, maxBytes, context)
  recorder.stopFinish = runtime.on("finish", (event) => recorder.finish(event))
  recorders.add(recorder)
  return () => {
    recorders.delete(recorder)
    return recorder.stop()
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
