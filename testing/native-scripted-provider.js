// nativeScriptedProvider(): a test utility for Rust-native provider ports. Its run() hands the
// request's granted Tools to Rust, where a tokio task calls them through the one Tool
// dispatcher (src/tools/dispatch.rs) with scripted inputs, exactly as the ACP engine or the MCP
// bridge will; the response text is one JSON outcome per line.

import {
  cancellationCancel,
  cancellationCreate,
  cancellationRelease,
  nativeScriptProblem,
  nativeScriptRun,
} from "../lib/core/native.js"
import { lendTools } from "../lib/tools/native-dispatch.js"
import { isNormalized } from "../lib/checks/normalized.js"

function readPlan(plan) {
  if (typeof plan !== "object" || plan === null) throw new TypeError("nativeScriptedProvider plan must be an object")
  const { concurrent = false, name = "native-scripted", steps } = plan
  if (!isNormalized(name)) {
    throw new TypeError("nativeScriptedProvider name must be a non-empty normalized string")
  }
  // Rust parses the script on every run; checking once here makes a bad plan fail at
  // creation, with the parser's own words.
  const script = JSON.stringify({ concurrent, steps })
  const problem = nativeScriptProblem(script)
  if (problem !== null) throw new TypeError(`nativeScriptedProvider plan is invalid: ${problem}`)
  return { name, script }
}

class NativeScriptedProvider {
  #reports = []
  #script

  constructor(name, script) {
    this.name = name
    this.#script = script
  }

  /** Every finished run, in order: `{ text, cancelled }`, frozen. */
  get reports() {
    return Object.freeze([...this.#reports])
  }

  async run(request, context) {
    const signal = context.signal
    if (signal.aborted) throw signal.reason
    const lent = lendTools(request.tools, signal)
    const token = cancellationCreate()
    const onAbort = () => cancellationCancel(token)
    signal.addEventListener("abort", onAbort, { once: true })
    let result
    try {
      result = await nativeScriptRun(token, this.#script, lent.json)
    } finally {
      signal.removeEventListener("abort", onAbort)
      cancellationRelease(token)
      lent.release()
    }
    this.#reports.push(Object.freeze({ cancelled: result.cancelled, text: result.text }))
    // The Rust run settles its pending calls first, then the provider honours the abort
    // with the caller's own reason (identity kept).
    if (signal.aborted) throw signal.reason
    return { text: result.text }
  }
}

/**
 * Creates a provider whose runs call granted Tools from Rust.
 * `plan`: `{ steps: [{ tool, input }], concurrent?, name? }`.
 */
export function nativeScriptedProvider(plan) {
  const { name, script } = readPlan(plan)
  return new NativeScriptedProvider(name, script)
}
