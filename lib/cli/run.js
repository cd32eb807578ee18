// `aml run <workflowFile>`: env, module, export, one fresh AmlRuntime, output, exit code.
import { dirname } from "node:path"

import { formatFailure } from "./diagnostics.js"
import { applyRuntimeEnvFile, applyWorkflowEnv, resolveRuntimeEnvFile } from "./env-layers.js"
import { importWorkflow, prepareWorkflow, resolveWorkflowFile } from "./load-workflow.js"
import { RunSignalCancellation } from "./run-signal-cancellation.js"
import { selectExport } from "./select-export.js"

const stderrLine = (line) => process.stderr.write(`${line}\n`)
const round = (ms) => Math.round(ms * 10) / 10

// Awaits `value` but gives up at the first abort, so a slow `main()` is interruptible too.
function untilAborted(value, signal) {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    Promise.resolve(value).then(
      (result) => {
        signal.removeEventListener("abort", onAbort)
        resolvePromise(result)
      },
      (error) => {
        signal.removeEventListener("abort", onAbort)
        reject(error)
      },
    )
  })
}

/**
 * Whether the progress display applies (docs/CLI.md "Progress"): both streams are terminals
 * that understand cursor movement, and the output is for a person. Decided here so that a
 * run through pipes never loads lib/cli/progress/ (cold start).
 */
function progressWanted(options, env = process.env) {
  return process.stdout.isTTY === true && process.stderr.isTTY === true && env.TERM !== "dumb" && !options.quiet && !options.json
}

// Where the run's own stderr lines go: above the progress block when there is one.
function lineWriter(display) {
  return display === undefined ? stderrLine : (line) => display.log(line)
}

async function evaluateWorkflow(options, signal, display, state) {
  const log = lineWriter(display)
  // --quiet keeps failures (and --trace, asked for explicitly) and drops the run's chatter.
  const info = options.quiet ? () => {} : log
  const cwd = process.cwd()
  const path = resolveWorkflowFile(options.file, cwd)
  const workflowDir = dirname(path)
  applyWorkflowEnv(process.env, workflowDir)
  if (options.runtimeEnvFile !== undefined) {
    applyRuntimeEnvFile(process.env, resolveRuntimeEnvFile(options.runtimeEnvFile, cwd, workflowDir))
  }
  // Compiled (or left to the hooks) before anything runs; then the SDK copy it links against
  // loads before the workflow and before any module hooks exist: with `module.register`
  // every later import is a round trip to Node's loader thread.
  const prepared = await prepareWorkflow(path)
  const { AmlRuntime, createConsoleTracer, createFileJournal, createMemoryJournal, recordRuns } = await import(prepared.sdkUrl)
  // Interrupted while the SDK loaded: the workflow's top-level code must not start at all.
  if (signal.aborted) throw signal.reason
  const namespace = await untilAborted(importWorkflow(path, prepared), signal)
  const selected = selectExport(namespace, path, options.entry)
  // Opened before main() runs: a journal of another workflow stops the run before any effect.
  let journal
  const exportName = options.entry ?? (Object.hasOwn(namespace, "default") ? "default" : "main")
  if (options.journal !== undefined) {
    const { cutRunJournal, openRunJournal, resumeLine } = await import("./run-journal.js")
    if (options.from !== undefined) info(cutRunJournal(options.journal, cwd, path, exportName, options.from))
    const opened = openRunJournal(createFileJournal, options.journal, cwd, path, exportName)
    journal = opened.journal
    state.journal = opened
    if (opened.steps > 0) info(resumeLine(opened.path, opened.steps))
  }
  const value = await untilAborted(typeof selected === "function" ? selected() : selected, signal)

  const trace = options.trace ? createConsoleTracer({ captureContent: options.captureContent, write: log }) : undefined
  const runtimeOptions = {}
  if (trace !== undefined) runtimeOptions.trace = trace
  if (options.agent !== undefined) {
    // --agent: the provider of every Agent that names none (docs/CLI.md).
    const [sdk, { agentProviderFor }] = await Promise.all([import(prepared.sdkUrl), import("./agent-choice.js")])
    runtimeOptions.agentProvider = agentProviderFor(sdk, options.agent)
  }
  const runtime = new AmlRuntime(Object.keys(runtimeOptions).length === 0 ? undefined : runtimeOptions)
  if (display !== undefined) runtime.on("trace", display.sink)
  // Recorded unless --no-record or AML_RECORD=0; a re-run (--rerun-of, started by the
  // studio) is always recorded: that is its point.
  if (options.record || options.rerunOf !== undefined) {
    // docs/STUDIO.md: the run is kept for `aml studio`, with a journal to re-run it from.
    const implicit = journal === undefined
    journal ??= createMemoryJournal()
    const { recordRun } = await import("./run-record.js")
    recordRun(recordRuns, runtime, options, { journal, implicit, path, exportName, cwd })
  }
  let runId
  let usage
  let startedAt = performance.now()
  runtime.on("start", (event) => {
    runId = event.runId
    startedAt = performance.now()
    info(`aml: starting run ${runId} for ${path}`)
  })
  runtime.on("finish", (event) => {
    // On a terminal the finish line is also the run's summary (docs/CLI.md "Progress").
    const summary = display === undefined ? "" : display.tracker.summary()
    display?.stop()
    usage = event.usage
    const tokens = usage === undefined ? "" : ` — ${usageLine(usage)}`
    info(`aml: finished run ${event.runId} (${event.status}) in ${round(performance.now() - startedAt)}ms${summary === "" ? "" : ` — ${summary}`}${tokens}`)
  })
  const result = await runtime.evaluate(value, journal === undefined ? { signal } : { journal, signal })
  return { runId, durationMs: round(performance.now() - startedAt), result, usage }
}

/** Runs the command; resolves with the process exit code (never rejects). */
export async function runCommand(options) {
  const cancellation = new RunSignalCancellation()
  const state = {}
  let display
  try {
    if (progressWanted(options)) {
      const { ProgressDisplay } = await import("./progress/display.js")
      display = new ProgressDisplay({ signal: cancellation.signal })
    }
    const outcome = await evaluateWorkflow(options, cancellation.signal, display, state)
    // A run that completed while a signal was arriving still counts as interrupted.
    if (cancellation.exitCode !== undefined) {
      display?.stop()
      stderrLine(formatFailure(cancellation.signal.reason))
      return cancellation.exitCode
    }
    const { runId, durationMs, result, usage } = outcome
    // `usage` only when a provider reported some (issue 37): the documented shape otherwise.
    const json = usage === undefined ? { runId, durationMs, success: true, result } : { runId, durationMs, success: true, result, usage }
    process.stdout.write(options.json ? `${JSON.stringify(json, null, 2)}\n` : `${result}\n`)
    return 0
  } catch (error) {
    // An interrupted run reports the interruption (docs/CLI.md), not the error it surfaced
    // as: an Agent cancelled by the signal rejects with its wrapper around the reason.
    display?.stop()
    stderrLine(formatFailure(cancellation.exitCode === undefined ? error : cancellation.signal.reason))
    if (state.journal !== undefined && !options.quiet) stderrLine(state.journal.keptLine())
    return cancellation.exitCode ?? 1
  } finally {
    display?.stop()
    cancellation.dispose()
  }
}

/** The finish line's token totals (docs/CLI.md): `tokens: 12 input, 30 output, 42 total`. */
function usageLine(usage) {
  const parts = []
  if (usage.inputTokens !== undefined) parts.push(`${usage.inputTokens} input`)
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} output`)
  if (usage.cachedInputTokens !== undefined) parts.push(`${usage.cachedInputTokens} cached input`)
  if (usage.reasoningTokens !== undefined) parts.push(`${usage.reasoningTokens} reasoning`)
  if (usage.totalTokens !== undefined) parts.push(`${usage.totalTokens} total`)
  return `tokens: ${parts.join(", ")}`
}
