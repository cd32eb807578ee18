// AbstractAgentProvider (INVENTORY PA-3): the template for providers that retain one session
// per <Agent>. Subclasses supply openSession(); the base owns turn construction, the
// pre-cancellation check, the agent.session span, turn execution and cleanup. Nothing in
// the SDK checks `instanceof AbstractAgentProvider`: a subclass is an ordinary AgentProvider.

import { inSessionSpan, runAgentProviderSession, sessionSpans } from "./provider-session.js"
import { createAgentProviderTurns } from "./provider-turns.js"

export class AbstractAgentProvider {
  /** `protected` in the typings: only subclasses construct a provider. */
  constructor(name) {
    this.name = name
  }

  /** Fails closed: a subclass must opt in to each Sandbox it can really run inside. */
  supportsSandbox() {
    return false
  }

  async run(request, context) {
    const name = this.name
    const turns = createAgentProviderTurns(request, name)
    const signal = context.signal
    if (signal.aborted) throw signal.reason
    const attributes = { provider: name }
    const model = request.model
    if (model !== undefined) attributes.model = model
    const spans = sessionSpans(context)
    // Opened before openSession so the span also covers session start-up.
    const spanId = spans?.open("agent.session", attributes)
    return inSessionSpan(spans, spanId, async () => {
      const session = await this.openSession(request, context)
      return runAgentProviderSession(session, turns, context, name, spans, spanId)
    })
  }
}
