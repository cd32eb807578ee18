// executeAgentProviderSession (INVENTORY PA-6): drives one retained provider session through
// its turns, forwards cancellation to the session, and always closes it. The agent.session,
// agent.turn and agent.cleanup spans (§2.3) and the cancellation point event (§2.4) go
// through the observability service the runtime attached to the context; a context AML did
// not create (createAgentExecutionContext, a hand-made object) simply emits nothing.

import { observabilityOf } from "./services.js"
import { masked } from "../core/component-scope.js"

/**
 * Span calls that can never disturb the provider lifecycle: a trace failure must not skip
 * close() or replace the provider's own outcome, so a throwing service is ignored.
 */
export function sessionSpans(context) {
  const service = observabilityOf(context)
  if (service === undefined) return undefined
  const guard = (fn) => {
    try {
      return fn()
    } catch {
      return undefined
    }
  }
  return {
    open: (name, attributes, sensitive, parentSpanId) =>
      guard(() => service.openSpan(name, attributes, sensitive, parentSpanId)),
    close: (spanId, attributes) => spanId !== undefined && guard(() => service.closeSpan(spanId, attributes)),
    fail: (spanId, error) => spanId !== undefined && guard(() => service.failSpan(spanId, error)),
    point: (spanId, name, attributes, sensitive) =>
      spanId !== undefined && guard(() => service.point(spanId, name, attributes, sensitive)),
    detail: () => guard(() => service.traceDetail()) ?? 0,
    points: (list) => guard(() => service.points(list)),
  }
}

/** Calls `fn` on `target`, turning a synchronous throw into a rejection. */
function call(fn, target, ...args) {
  try {
    return Promise.resolve(fn.call(target, ...args))
  } catch (error) {
    return Promise.reject(error)
  }
}

/** Reads and checks the session members in contract order: close, then abort and runTurn. */
function captureSession(session, label) {
  if ((typeof session !== "object" && typeof session !== "function") || session === null) {
    throw new TypeError(`${label} returned an invalid session`)
  }
  let close
  try {
    close = session.close
  } catch (cause) {
    throw new TypeError(`${label} returned a session with unreadable close()`, { cause })
  }
  if (typeof close !== "function") throw new TypeError(`${label} returned a session without close()`)
  // From here on a failure still owes the provider a close(); the caller sees `close`.
  let abort
  let runTurn
  let error
  try {
    abort = session.abort
    runTurn = session.runTurn
  } catch (cause) {
    error = new TypeError(`${label} returned an unreadable session`, { cause })
  }
  if (error === undefined && abort !== undefined && typeof abort !== "function") {
    error = new TypeError(`${label} session abort must be a function when provided`)
  }
  if (error === undefined && typeof runTurn !== "function") {
    error = new TypeError(`${label} returned a session without runTurn()`)
  }
  return { abort, close, error, runTurn }
}

/** close() inside an agent.cleanup span; resolves with the cleanup error, if any. */
async function closeSession(spans, sessionSpanId, session, close, hooks) {
  const spanId = spans?.open("agent.cleanup", undefined, undefined, sessionSpanId)
  try {
    // Built-in sessions (hooks) learn the span their cleanup events belong to.
    await (hooks === undefined ? call(close, session) : call(close, session, spanId))
  } catch (error) {
    spans?.fail(spanId, error)
    return { error, failed: true }
  }
  spans?.close(spanId)
  return { failed: false }
}

/**
 * The body of executeAgentProviderSession with the enclosing agent.session span already
 * open (AbstractAgentProvider opens it before openSession so it covers session start-up).
 * `hooks` is for the SDK's own sessions (the ACP engine): when given, runTurn and close get
 * the id of their agent.turn / agent.cleanup span as an extra argument (their point events
 * belong there), and `hooks.turnEnd(response)` supplies the turn span's end attributes.
 */
export async function runAgentProviderSession(session, turns, context, providerName, spans, sessionSpanId, hooks) {
  const label = `Agent provider "${providerName}"`
  const { abort, close, error: invalid, runTurn } = captureSession(session, label)
  if (invalid !== undefined) {
    const cleanup = await closeSession(spans, sessionSpanId, session, close, hooks)
    if (cleanup.failed) {
      throw new AggregateError([invalid, cleanup.error], `${label} session validation and cleanup failed`)
    }
    throw invalid
  }

  const signal = context.signal
  let aborting
  const onAbort = () => {
    if (aborting !== undefined) return
    spans?.point(sessionSpanId, "agent.session", { state: "cancellation_requested" })
    // The listener runs inside whoever called controller.abort(), possibly a component;
    // provider code must not see that component's evaluate().
    aborting = abort === undefined ? Promise.resolve() : masked(call, abort, session)
    // Awaited after the turn loop; until then a rejection must not count as unhandled.
    aborting.catch(() => {})
  }
  // A cancellation that arrived while the session was opening is still forwarded to it:
  // no abort event will fire for a signal that is already aborted.
  if (signal.aborted) onAbort()
  else signal.addEventListener("abort", onAbort, { once: true })

  const errors = []
  let response
  try {
    for (let index = 0; index < turns.length; index++) {
      if (signal.aborted) throw signal.reason
      const turn = turns[index]
      const spanId = spans?.open(
        "agent.turn",
        { index: index + 1, kind: index === 0 ? "initial" : "follow-up" },
        { prompt: turn.prompt },
        sessionSpanId,
      )
      try {
        response = await (hooks === undefined
          ? call(runTurn, session, turn, context)
          : call(runTurn, session, turn, context, spanId))
      } catch (error) {
        spans?.fail(spanId, error)
        throw error
      }
      spans?.close(spanId, hooks?.turnEnd(response))
      if (signal.aborted) throw signal.reason
    }
    if (response === undefined) throw new Error(`${label} session produced no response`)
  } catch (error) {
    // A turn that failed because of the cancellation reports the cancellation itself.
    errors.push(signal.aborted ? signal.reason : error)
  } finally {
    signal.removeEventListener("abort", onAbort)
  }

  if (aborting !== undefined) {
    try {
      await aborting
    } catch (error) {
      errors.push(error)
    }
  }
  const cleanup = await closeSession(spans, sessionSpanId, session, close, hooks)
  if (cleanup.failed) errors.push(cleanup.error)
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, `${label} session execution and cleanup failed`)
  return response
}

/**
 * Public PA-6 entry. Used on its own (outside AbstractAgentProvider) it opens the
 * agent.session span itself, so agent.turn and agent.cleanup keep their catalogue parent.
 */
export async function executeAgentProviderSession(session, turns, context, providerName) {
  const spans = sessionSpans(context)
  const spanId = spans?.open("agent.session", { provider: providerName })
  return inSessionSpan(spans, spanId, () => runAgentProviderSession(session, turns, context, providerName, spans, spanId))
}

/**
 * Runs `work` (a session's turns and cleanup) as the agent.session span `spanId`: closed on
 * success, failed with the error that ends it. The one rule for AbstractAgentProvider.run
 * and executeAgentProviderSession.
 */
export async function inSessionSpan(spans, spanId, work) {
  try {
    const response = await work()
    spans?.close(spanId)
    return response
  } catch (error) {
    spans?.fail(spanId, error)
    throw error
  }
}
