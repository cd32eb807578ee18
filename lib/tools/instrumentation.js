// Running a registered Tool port inside an evaluation (TL-4, §2.3, §2.5): every call gets a
// `tool` span, and the input/output JSON is serialised into it only while some trace
// listener captures content. Two entry points share this:
// - the wrappers a provider receives in `request.tools` (span under the Agent span);
// - callable Tools, `tool(input)` from an active component (span under the component span).
// The port does the validation (lib/tools/tool.js); it may come from another SDK copy.

import { masked } from "../core/component-scope.js"
import { journalToolStep } from "../core/native.js"
import { EvaluationError } from "../errors/errors.js"
import { inSpan } from "../observability/span-runner.js"
import { jsonText } from "../schema/stable-json.js"

/** Settles like `promise`, or rejects with the reason as soon as `signal` aborts. */
export function raceSignal(promise, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    const done = () => signal.removeEventListener("abort", onAbort)
    promise.then(
      (value) => {
        done()
        resolve(value)
      },
      (error) => {
        done()
        reject(error)
      },
    )
  })
}

/** `{ [name]: json }` for a content span attribute; a value too deep to serialise is omitted. */
function contentOf(domain, name, snapshot) {
  // Only while some trace listener consents (the domain's one consent flag, domain-trace.js).
  if (snapshot === undefined || !domain.traceContent) return undefined
  const text = jsonText(snapshot)
  return text === undefined ? undefined : { [name]: text }
}

/**
 * Runs `port` with `input` under a new `tool` span whose parent is `parentSpanId`.
 * `signal` is what the executor receives; it and the evaluation's signal cancel the call.
 * Not async: a synchronous Tool settles its span at once and costs one promise. Never
 * throws: every failure rejects. `stepKey`: the journal key of a live journaled call
 * (lib/journal/tool.js), which its span then names (a `journal.step` point).
 */
export function runToolSpan(domain, port, input, parentSpanId, signal, stepKey) {
  try {
    return startToolSpan(domain, port, input, parentSpanId, signal, stepKey)
  } catch (error) {
    return Promise.reject(error)
  }
}

function startToolSpan(domain, port, input, parentSpanId, signal, stepKey) {
  // The transport snapshot is taken before the span opens so the span can carry it; a
  // failure still gets its span, which then fails with the ToolInputError (§2.3).
  let snapshot
  let inputError
  try {
    snapshot = port.snapshotInput(input)
  } catch (error) {
    inputError = error
  }
  const sensitive = contentOf(domain, "input", snapshot)
  const spanId =
    sensitive === undefined && typeof parentSpanId === "string"
      ? openPlainToolSpan(domain, port.name, parentSpanId)
      : domain.openSpan("tool", port.name, parentSpanId, { sensitive })
  if (stepKey !== undefined && domain.tracing && typeof parentSpanId === "string") {
    journalToolStep(domain.native.id, spanId, parentSpanId, stepKey)
    domain.flushTrace()
  }
  const evaluation = domain.signal
  let running
  try {
    if (inputError !== undefined) throw inputError
    if (signal.aborted) throw signal.reason
    // The same signal answers the same; without a caller's signal the evaluation's never aborts.
    if (signal !== evaluation && domain.abortable && evaluation.aborted) throw evaluation.reason
    // The executor gets `signal` itself (TL-3: a provider-narrowed signal reaches it as the
    // same object). The evaluation's abort is raced out below instead, through the domain's
    // one abort listener, so many concurrent calls do not pile listeners onto its signal.
    const trace = Object.freeze({ parentSpanId, runId: domain.runId, spanId })
    const executionContext = Object.freeze({ signal, trace })
    // A port from an older SDK copy has only the always-asynchronous `invoke`.
    const invoke = port.invokeDirect ?? port.invoke
    running =
      domain.spanRunner === undefined
        ? masked(invoke, snapshot, executionContext)
        : inSpan(domain, spanId, () => masked(invoke, snapshot, executionContext))
  } catch (error) {
    return Promise.reject(failToolSpan(domain, spanId, error))
  }
  if (!(running instanceof Promise)) return Promise.resolve(closeToolSpan(domain, spanId, running))
  return settleToolSpan(domain, spanId, signal === evaluation ? running : raceSignal(running, signal))
}

async function settleToolSpan(domain, spanId, running) {
  let output
  try {
    output = await domain.race(running)
  } catch (error) {
    throw failToolSpan(domain, spanId, error)
  }
  return closeToolSpan(domain, spanId, output)
}

function failToolSpan(domain, spanId, error) {
  if (!domain.closed) domain.closeSpan(spanId, true, error)
  return error
}

function closeToolSpan(domain, spanId, output) {
  if (domain.closed) return output
  const sensitive = contentOf(domain, "output", output)
  if (sensitive !== undefined) {
    domain.closeSpan(spanId, false, undefined, undefined, sensitive)
    return output
  }
  // What domain.closeSpan does for a span without attributes, in one narrower crossing.
  domain.native.closeToolSpan(spanId)
  if (domain.tracing) domain.flushTrace()
  return output
}

/** What domain.openSpan("tool", name, parentSpanId) does, in one narrower crossing. */
function openPlainToolSpan(domain, name, parentSpanId) {
  const id = domain.native.openToolSpan(name, parentSpanId)
  if (domain.tracing) domain.flushTrace()
  return id
}

/**
 * The signal of one provider-initiated call: the provider may narrow cancellation per call
 * (TL-3), and then the executor receives exactly that signal; the evaluation's own abort
 * still ends the call (runToolSpan races it).
 */
export function toolSignal(domain, context) {
  try {
    const own = context?.signal
    if (own instanceof AbortSignal) return own
  } catch {
    // A hostile context getter: keep the evaluation's signal.
  }
  return domain.signal
}

/**
 * One `request.tools` entry for the table entry `entry`: a runtime-owned Tool (the Loop's
 * `aml_set_state`, lib/loop/state-tool.js) builds its own wrapper; a registered port is
 * instrumented.
 */
export function grantedTool(domain, entry, agentTrace, lease) {
  if (typeof entry.instrument === "function") return entry.instrument(agentTrace, lease)
  return instrumentTool(domain, entry, agentTrace, lease)
}

/**
 * Wraps `port` for one Agent call whose trace identity is `agentTrace`. `lease.open` is
 * true while the provider call runs: a Tool is the Agent's capability, so a provider that
 * kept the wrapper cannot run it after the Agent completed.
 */
export function instrumentTool(domain, port, agentTrace, lease) {
  const name = port.name
  // Not async: runToolSpan already returns the call's promise, and an async wrapper would
  // add a promise and two turns per call. Failures still reject, never throw.
  const execute = (input, context) => {
    if (!lease.open || domain.closed) {
      return Promise.reject(new EvaluationError(`Tool "${name}" was called after its Agent completed`))
    }
    return runToolSpan(domain, port, input, agentTrace.spanId, toolSignal(domain, context))
  }
  return Object.freeze({
    description: port.description,
    execute,
    inputSchema: port.inputSchema,
    kind: "javascript",
    name,
  })
}
