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

async function evaluateWorkflow(options, signal) {
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
  const { AmlRuntime, createConsoleTracer } = await import(prepared.sdkUrl)
  // Interrupted while the SDK loaded: the workflow's top-level code must not start at all.
  if (signal.aborted) throw signal.reason
  const namespace = await untilAborted(importWorkflow(path, prepared), signal)
  const selected = selectExport(namespace, path, options.entry)
  const value = await untilAborted(typeof selected === "function" ? selected() : selected, signal)

  const trace = options.trace ? createConsoleTracer({ captureContent: options.captureContent, write: stderrLine }) : undefined
  const runtime = new AmlRuntime(trace === undefined ? undefined : { trace })
  let runId
  let startedAt = performance.now()
  runtime.on("start", (event) => {
    runId = event.runId
    startedAt = performance.now()
    stderrLine(`aml: starting run ${runId} for ${path}`)
  })
  runtime.on("finish", (event) => {
    stderrLine(`aml: finished run ${event.runId} (${event.status}) in ${round(performance.now() - startedAt)}ms`)
  })
  const result = await runtime.evaluate(value, { signal })
  return { runId, durationMs: round(performance.now() - startedAt), result }
}

/** Runs the command; resolves with the process exit code (never rejects). */
export async function runCommand(options) {
  const cancellation = new RunSignalCancellation()
  try {
    const outcome = await evaluateWorkflow(options, cancellation.signal)
    // A run that completed while a signal was arriving still counts as interrupted.
    if (cancellation.exitCode !== undefined) {
      stderrLine(formatFailure(cancellation.signal.reason))
      return cancellation.exitCode
    }
    const { runId, durationMs, result } = outcome
    process.stdout.write(options.json ? `${JSON.stringify({ runId, durationMs, success: true, result }, null, 2)}\n` : `${result}\n`)
    return 0
  } catch (error) {
    // An interrupted run reports the interruption (docs/CLI.md), not the error it surfaced
    // as: an Agent cancelled by the signal rejects with its wrapper around the reason.
    stderrLine(formatFailure(cancellation.exitCode === undefined ? error : cancellation.signal.reason))
    return cancellation.exitCode ?? 1
  } finally {
    cancellation.dispose()
  }
}
