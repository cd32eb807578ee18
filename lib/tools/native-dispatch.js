// The JS half of the Tool dispatcher (src/tools/dispatch.rs). A Rust-native provider calls
// the Tools of its request by small integer refs; `dispatch` resolves a ref to the wrapper
// from `request.tools`, so a native call runs exactly what a JS provider's
// `tool.execute(input, context)` runs: the lease check, the `tool` span under the Agent span,
// the TL-3 validation pipeline, cancellation.
//
// Protocol (Rust → JS, through one weak threadsafe function per Node environment):
//   dispatch(0, call, ref, inputJson) → Promise<{ ok: true, value: outputJson }
//                                              | { ok: false, name, message, aborted }>
//   dispatch(1, call)                 → aborts the executor signal of call `call`, if running
// `dispatch` never throws and its Promise never rejects: every failure is data (oxc style),
// because a throw would reach Rust as a broken host, not as the Tool's error.

import { describeError } from "../errors/error-shape.js"
import { toolDispatcherInstall, toolDispatcherInstalled } from "../core/native.js"
import { realmSingleton } from "../core/realm.js"

const CALL = 0
const CANCEL = 1
const ACKNOWLEDGED = Promise.resolve(Object.freeze({ ok: true, value: "null" }))

// Realm-shared (RT-4): when two SDK copies load the same addon, whichever copy installed the
// dispatcher must find the Tools lent by the other.
const table = realmSingleton(
  "@aml-jsx/sdk/native-tool-table",
  () => ({ calls: new Map(), next: 0, tools: new Map() }),
  (value) => typeof value === "object" && value !== null && value.tools instanceof Map && value.calls instanceof Map,
  "AML native Tool table has an invalid global value",
)

function nextRef() {
  // u32 refs, never 0 and never one still lent, so a stale ref cannot reach another run.
  do table.next = (table.next + 1) >>> 0
  while (table.next === 0 || table.tools.has(table.next))
  return table.next
}

function isReason(error, signal) {
  return signal.aborted && error === signal.reason
}

async function settle(call, ref, input) {
  const entry = table.tools.get(ref)
  if (entry === undefined) {
    return { message: `Tool reference ${ref} is no longer lent to a provider`, name: "EvaluationError", ok: false }
  }
  // Per call, so Rust can cancel one call without aborting the evaluation. This shim is the
  // provider narrowing the signal (TL-3), so it forwards the run's abort to the call's
  // controller itself: the executor sees an abort of either at once. Not AbortSignal.any, and
  // not a listener per call: the run signal may be the caller's, and concurrent calls would
  // each add a listener to it (past ten, Node warns about a leak on a signal we do not own).
  // One listener per lending forwards to every running call (`follow`).
  const controller = new AbortController()
  const run = entry.lending.signal
  if (run.aborted) controller.abort(run.reason)
  else entry.lending.follow(controller)
  table.calls.set(call, controller)
  try {
    const value = await entry.tool.execute(JSON.parse(input), { signal: controller.signal })
    return { ok: true, value: JSON.stringify(value) }
  } catch (error) {
    const { type, message } = describeError(error)
    const aborted = isReason(error, controller.signal) || isReason(error, run)
    return { aborted, message, name: type, ok: false }
  } finally {
    entry.lending.unfollow(controller)
    table.calls.delete(call)
  }
}

/** The dispatcher callback (see the header). Exported for tests that swap it. */
export function dispatch(op, call, ref, input) {
  if (op === CANCEL) {
    try {
      table.calls.get(call)?.abort()
    } catch {
      // An abort listener threw; the call's own outcome still reports the abort.
    }
    return ACKNOWLEDGED
  }
  if (op !== CALL) return Promise.resolve({ message: `Unknown dispatch op ${op}`, name: "Error", ok: false })
  return settle(call, ref, input)
}

/**
 * Lends `requestTools` (a provider request's `tools`) to one native provider call whose
 * cancellation is `signal`. Returns the `ToolSpec` JSON for Rust and `release()`, which the
 * provider must call when its run settles.
 */
export function lendTools(requestTools, signal) {
  if (!toolDispatcherInstalled()) toolDispatcherInstall(dispatch)
  const lending = lendingOf(signal)
  const refs = []
  const specs = []
  for (const tool of requestTools) {
    const ref = nextRef()
    table.tools.set(ref, { lending, tool })
    refs.push(ref)
    specs.push({ description: tool.description, inputSchema: tool.inputSchema, name: tool.name, ref })
  }
  const release = () => {
    for (const ref of refs) table.tools.delete(ref)
  }
  return { json: JSON.stringify(specs), release }
}

/**
 * The running calls of one lending and the one abort listener they share on `signal`: added
 * when the first call starts, removed when the last one settles, so an idle lending leaves
 * the signal as it found it.
 */
function lendingOf(signal) {
  const running = new Set()
  const forward = () => {
    for (const controller of running) controller.abort(signal.reason)
  }
  return {
    follow(controller) {
      if (running.size === 0) signal.addEventListener("abort", forward, { once: true })
      running.add(controller)
    },
    signal,
    unfollow(controller) {
      if (running.delete(controller) && running.size === 0) signal.removeEventListener("abort", forward)
    },
  }
}

/** Lent Tools and running calls (leak checks in tests). */
export function liveNativeTools() {
  return { calls: table.calls.size, tools: table.tools.size }
}
