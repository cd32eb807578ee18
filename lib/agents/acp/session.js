// One ACP session as the JS side sees it: a native handle (src/acp/session.rs over crates/aml-acp)
// and the pump that turns its ordered event stream into trace events. The session object
// has the PA-4 shape (runTurn, abort, close) so runAgentProviderSession drives it like any
// retained provider session and owns the agent.turn / agent.cleanup spans.
//
// Events (observability.mdx "The ACP boundary"): process facts become `sandbox.process`
// (command only as sensitive content), every update one `acp.session.update` whose raw JSON
// is sensitive content, so only listeners that opted in to content ever receive it.

import {
  acpSessionCancel,
  acpSessionClose,
  acpSessionNext,
  acpSessionPrompt,
  acpSessionRelease,
  sumUsage,
} from "../../core/native.js"

/**
 * The Error of a failed event. A wait failure of a Sandbox process is the launcher's own
 * `wait()` rejection (`waitFailure`), not an Error rebuilt from its message.
 */
function failure(event, hint, waitFailure) {
  if (event.errorKind === "spawn" && event.code === "ENOENT" && hint !== undefined) {
    return new Error(`${event.message}. ${hint}`)
  }
  if (event.errorKind === "wait") {
    const observed = waitFailure?.()
    if (observed !== undefined) return observed.error
  }
  return new Error(event.message)
}

const asError = (entry) => (typeof entry === "string" ? new Error(entry) : entry)
const NO_EXTRA = Object.freeze({ resourceErrors: [], sessionErrors: [] })

/** The Closed event plus what releasing the invocation's own resources reported. */
function merge(event, extra) {
  return {
    ...event,
    resourceErrors: [...event.resourceErrors, ...extra.resourceErrors],
    sessionErrors: [...event.sessionErrors, ...extra.sessionErrors],
  }
}

function cleanupError(event, providerName) {
  const session = event.sessionErrors.map(asError)
  const resources = event.resourceErrors.map(asError)
  const sessionError = session.length === 0 ? undefined : new AggregateError(session, "ACP session cleanup failed")
  const resourceError =
    resources.length === 0 ? undefined : new AggregateError(resources, "ACP invocation resource cleanup failed")
  if (sessionError !== undefined && resourceError !== undefined) {
    return new AggregateError([sessionError, resourceError], `Agent provider "${providerName}" ACP session cleanup failed`)
  }
  return sessionError ?? resourceError
}

export class AcpSession {
  #handle
  #spans
  #sessionSpanId
  #parent
  #launch
  #providerName
  #hint
  #batch = []
  #index = 0
  #sessionId
  #lastTurn
  #closed
  #released = false

  #releaseResources
  #structured
  #waitFailure
  /** The usage of each completed turn, in AML field names (issue 37). */
  #tokens = []

  constructor(handle, spans, sessionSpanId, launch, providerName, hint, releaseResources, structured, waitFailure) {
    this.#waitFailure = waitFailure
    this.#releaseResources = releaseResources
    this.#structured = structured
    structured?.submission.attach((name, attributes, sensitive) => this.#point(name, attributes, sensitive))
    this.#handle = handle
    this.#spans = spans
    this.#sessionSpanId = sessionSpanId
    this.#parent = sessionSpanId
    this.#launch = launch
    this.#providerName = providerName
    this.#hint = hint
    // runAgentProviderSession hooks: the turn span's ACP end attributes.
    this.hooks = Object.freeze({ turnEnd: () => this.#lastTurn })
  }

  #point(name, attributes, sensitive) {
    this.#spans?.point(this.#parent, name, attributes, sensitive)
  }

  #reportUpdates(list) {
    if (this.#parent !== undefined) this.#spans?.points(list)
  }

  #process(event) {
    const attributes = { state: event.state }
    if (event.executionId !== undefined) attributes["execution.id"] = event.executionId
    if (event.exitCode !== undefined) attributes.exitCode = event.exitCode
    this.#point("sandbox.process", attributes, event.command === undefined ? undefined : { command: event.command })
  }

  /**
   * Reports updates and process facts until the next outcome event. A batch's updates are
   * reported together (one trace drain), before anything that follows them.
   */
  async #until() {
    for (;;) {
      const batch = this.#batch
      let updates
      while (this.#index < batch.length) {
        const event = batch[this.#index++]
        if (event.kind === "update") {
          const attributes = { sessionId: event.sessionId, sessionUpdate: event.sessionUpdate }
          if (event.toolName !== undefined) attributes.toolName = event.toolName
          const sensitive = event.update === undefined ? undefined : { update: event.update }
          ;(updates ??= []).push([this.#parent, "acp.session.update", attributes, sensitive])
          continue
        }
        if (updates !== undefined) this.#reportUpdates(updates)
        updates = undefined
        if (event.kind === "process") {
          this.#process(event)
        } else {
          return event
        }
      }
      if (updates !== undefined) this.#reportUpdates(updates)
      // Tell the session how much of each update is wanted now (a listener may come or go).
      this.#batch = JSON.parse(await acpSessionNext(this.#handle, this.#spans?.detail() ?? 0))
      this.#index = 0
      if (this.#batch.length === 0) return { kind: "closed", resourceErrors: [], sessionErrors: [] }
    }
  }

  /**
   * After the agent is gone: the native handle, then the invocation's resources (bridge,
   * Sandbox state). Resolves with their cleanup failures (`{ sessionErrors, resourceErrors }`).
   */
  async #release() {
    if (this.#released) return NO_EXTRA
    this.#released = true
    acpSessionRelease(this.#handle)
    return (await this.#releaseResources?.()) ?? NO_EXTRA
  }

  /** Waits for start-up; an abort closes the session and rejects with the reason. */
  async open(signal) {
    const onAbort = () => acpSessionClose(this.#handle)
    signal.addEventListener("abort", onAbort, { once: true })
    let event
    try {
      event = await this.#until()
    } finally {
      signal.removeEventListener("abort", onAbort)
    }
    if (event.kind === "created") {
      this.#sessionId = event.sessionId
      this.#point("acp.session.created", { sessionId: event.sessionId })
      return
    }
    const error = signal.aborted ? signal.reason : failure(event, this.#hint, this.#waitFailure)
    // Start-up failed: the native side cleans up on its own; report it and release.
    const closed = merge(await this.#until(), await this.#release())
    const cleanup = cleanupError(closed, this.#providerName)
    if (cleanup !== undefined) {
      throw new AggregateError([error, cleanup], `Agent provider "${this.#providerName}" ACP session cleanup failed`)
    }
    throw error
  }

  async runTurn(turn, _context, turnSpanId) {
    const launch = this.#launch
    let prompt = turn.prompt
    if (turn.index === 0 && launch.initialPromptPrefix !== undefined) prompt = `${launch.initialPromptPrefix}\n\n${prompt}`
    const structured = turn.isFinal && turn.output !== undefined ? this.#structured : undefined
    if (structured !== undefined) {
      prompt = `${prompt}\n\n${structured.instruction}`
      structured.submission.beginFinalTurn()
    }
    this.#parent = turnSpanId ?? this.#sessionSpanId
    this.#lastTurn = undefined
    try {
      this.#point("acp.session.prompt.submitted", { sessionId: this.#sessionId }, { prompt })
      acpSessionPrompt(this.#handle, prompt)
      const event = await this.#until()
      if (event.kind !== "completed") throw failure(event, this.#hint, this.#waitFailure)
      const end = { sessionId: this.#sessionId, stopReason: event.stopReason }
      if (event.usage !== undefined) end.usage = event.usage
      this.#point("acp.session.prompt.completed", end)
      this.#lastTurn = end
      const text =
        launch.transformText === undefined
          ? event.text
          : launch.transformText(event.text, Object.freeze({ sessionId: this.#sessionId }))
      if (typeof text !== "string") throw new TypeError("ACP Agent launch transformText must return a string")
      const response = structured === undefined ? { text } : { structured: structured.submission.result(), text }
      // The session's usage so far (issue 37): the last turn's response is the Agent's answer,
      // so it carries every turn's tokens, summed by the engine's rule.
      if (event.tokens !== undefined) this.#tokens.push(event.tokens)
      if (this.#tokens.length > 0) response.usage = this.#tokens.length === 1 ? this.#tokens[0] : sumUsage(this.#tokens)
      return response
    } finally {
      this.#parent = this.#sessionSpanId
    }
  }

  /** Cancellation: the event first, then the `session/cancel` notification. */
  async abort() {
    this.#point("acp.session.cancel", { sessionId: this.#sessionId })
    acpSessionCancel(this.#handle)
  }

  async close(cleanupSpanId) {
    if (this.#closed === undefined) {
      this.#parent = cleanupSpanId ?? this.#sessionSpanId
      acpSessionClose(this.#handle)
      this.#closed = this.#until().then(
        async (event) => merge(event, await this.#release()),
        async (error) => {
          await this.#release()
          throw error
        },
      )
    }
    const event = await this.#closed
    const error = cleanupError(event, this.#providerName)
    if (error !== undefined) throw error
  }
}
