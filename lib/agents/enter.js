// Entering an <Agent> node (INVENTORY AG-1): the props are read and checked once, then the
// engine opens the Agent span and asks for the children.
//
// A prop, provider or cwd check that fails still leaves the Agent's span in the trace
// (span-N, parent: the enclosing span), opened and closed with status "error", so a failed
// Agent is visible where it was authored, as it is for failures after the span opened.

import { readAgentProps } from "./props.js"

function failedAgentSpan(domain, task, error) {
  const spanId = domain.openSpan("agent", "Agent", domain.native.currentSpan(task), { resource: true })
  domain.closeSpan(spanId, true, error)
}

/** Enters the Agent node on top of `task`; `slot` keeps the captured entry until it runs. */
export function enterAgent(domain, task, node, slot) {
  let entry
  try {
    entry = readAgentProps(node.props, domain.options.agentProvider, slot.env.sandbox)
  } catch (error) {
    failedAgentSpan(domain, task, error)
    throw error
  }
  slot.entry = entry
  const provider = entry.provider
  // A sandboxed Agent stops for the Sandbox handshake once its children are done. Provider
  // name and model are span attributes: sent even untraced, because a trace listener added
  // while the Agent runs receives its span.end (OBS-1).
  const sandboxed = entry.sandbox !== undefined
  return domain.native.enterAgent(task, provider !== undefined, provider?.name, entry.model, entry.system, sandboxed)
}
