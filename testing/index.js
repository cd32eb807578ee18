// @aml-jsx/sdk/testing: credential-free fixtures and the provider conformance helpers
// (INVENTORY §1.20). Kept out of the root entry so production imports never load them.

import { captureAgentProvider } from "../lib/core/provider-shape.js"
import { isNormalized } from "../lib/checks/normalized.js"

export { DeterministicSandboxProvider, sandboxProviderConformance } from "./sandbox.js"
export { nativeScriptedProvider } from "./native-scripted-provider.js"
export { DeterministicWorkspaceProvider, workspaceProviderConformance } from "./workspace.js"
export { InMemoryWorkspaceStorageAdapter } from "./in-memory-workspace-storage.js"

const DEFAULT_RESPOND = (request) => ({ text: request.prompt })

/** An AgentProvider that records each call and answers from an application-owned strategy. */
export class DeterministicAgentProvider {
  #calls = []
  #count = 0
  #keep
  #respond
  #supportsSandbox

  constructor({ name = "deterministic", respond = DEFAULT_RESPOND, supportsSandbox, maxRecordedCalls = Infinity } = {}) {
    if (typeof name !== "string" || name.length === 0) {
      throw new TypeError("Deterministic Agent provider name must not be empty")
    }
    if (!isNormalized(name)) throw new TypeError("Deterministic Agent provider name must already be normalized")
    if (maxRecordedCalls !== Infinity && !(Number.isSafeInteger(maxRecordedCalls) && maxRecordedCalls >= 0)) {
      throw new TypeError("Deterministic Agent provider maxRecordedCalls must be a non-negative integer or Infinity")
    }
    this.name = name
    this.#keep = maxRecordedCalls
    this.#respond = respond
    this.#supportsSandbox = supportsSandbox
  }

  /**
   * A frozen snapshot, so a test cannot rewrite the provider's record of what happened: every
   * call by default, else the latest `maxRecordedCalls` since the last clearCalls().
   */
  get calls() {
    const calls = this.#calls
    return Object.freeze(calls.length > this.#keep ? calls.slice(calls.length - this.#keep) : [...calls])
  }

  /** Forgets the recorded calls (a long-running test's memory); call indexes keep counting. */
  clearCalls() {
    this.#calls = []
  }

  supportsSandbox(sandbox) {
    return this.#supportsSandbox?.(sandbox) === true
  }

  async run(request, context) {
    const signal = context.signal
    if (signal.aborted) throw signal.reason
    const callIndex = this.#count++
    const calls = this.#calls
    if (this.#keep > 0) calls.push(Object.freeze({ context, request }))
    // Trimmed in batches: one copy per `maxRecordedCalls` calls, not one shift per call.
    if (calls.length >= 2 * this.#keep && calls.length > 0) calls.splice(0, calls.length - this.#keep)
    const respond = this.#respond
    return await respond(request, context, callIndex)
  }
}

const NOOP_UNSUBSCRIBE = () => {}

/**
 * A frozen AgentExecutionContext for calling a provider directly. It has no observability
 * service, so helpers such as AbstractAgentProvider emit no spans through it.
 */
/** A new frozen trace identity: only `parentSpanId` (when given), `runId` and `spanId`. */
function copyTrace(trace) {
  const parentSpanId = trace.parentSpanId
  const copy = {}
  if (parentSpanId !== undefined) copy.parentSpanId = parentSpanId
  copy.runId = trace.runId
  copy.spanId = trace.spanId
  return Object.freeze(copy)
}

export function createAgentExecutionContext(overrides) {
  const context = {
    events: Object.freeze({ on: () => NOOP_UNSUBSCRIBE, once: () => NOOP_UNSUBSCRIBE }),
    signal: new AbortController().signal,
    trace: Object.freeze({ runId: "agent-test", spanId: "agent-test" }),
  }
  // An override left undefined keeps the default: `{ signal: undefined }` still gets a signal.
  if (overrides !== undefined && overrides !== null) {
    for (const key of Object.keys(overrides)) {
      const value = overrides[key]
      if (value !== undefined) context[key] = key === "trace" ? copyTrace(value) : value
    }
  }
  return Object.freeze(context)
}

const CONFORMANCE_REQUEST = Object.freeze({
  followUps: Object.freeze(["agent-provider-conformance-final"]),
  mcpServers: Object.freeze([]),
  permissions: Object.freeze({ filesystem: "read-write", network: true, shell: true }),
  prompt: "agent-provider-conformance",
  system: "Follow the provider contract.",
  tools: Object.freeze([]),
})

function hasText(response) {
  if (typeof response !== "object" || response === null) return false
  try {
    return typeof response.text === "string"
  } catch {
    return false
  }
}

/** Checks the portable Agent provider contract; rejects with a TypeError on a violation. */
export async function agentProviderConformance(provider) {
  // Captured once, as the runtime does, so both runs call the same run().
  const { run } = captureAgentProvider(provider)
  const response = await run.call(provider, CONFORMANCE_REQUEST, createAgentExecutionContext())
  if (!hasText(response)) throw new TypeError("Agent provider must return a text response")

  const reason = new Error("agent-provider-conformance-cancelled")
  const controller = new AbortController()
  controller.abort(reason)
  try {
    await run.call(provider, CONFORMANCE_REQUEST, createAgentExecutionContext({ signal: controller.signal }))
  } catch (error) {
    if (error === reason) return
    throw new TypeError("Agent provider must reject pre-cancelled execution with the AbortSignal reason", {
      cause: error,
    })
  }
  throw new TypeError("Agent provider must reject pre-cancelled execution")
}
