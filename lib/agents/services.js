// Services the runtime attaches to each AgentExecutionContext through realm WeakMaps (RT-4),
// so provider helpers from any SDK copy (executeAgentProviderSession, AbstractAgentProvider)
// can open agent.session / agent.turn / agent.cleanup spans in the right evaluation.
//
// Protocol of an observability service (cross-copy, keep it stable):
//   openSpan(name, attributes?, sensitive?, parentSpanId?) → spanId   (kind "agent")
//   closeSpan(spanId, attributes?, sensitive?)                         (status ok)
//   failSpan(spanId, error)                                            (status error)
//   point(spanId, name, attributes?, sensitive?)

import { realmSingleton } from "../core/realm.js"

// A base whose constructor returns its argument: a subclass constructor then adds its
// private fields to that existing object (the context), which stays a plain frozen object.
class Stamped {
  constructor(target) {
    return target
  }
}

/** The evaluation and Agent span a context's observability service will write to. */
class ObservabilityStamp extends Stamped {
  #domain
  #agentSpanId
  #service

  constructor(context, domain, agentSpanId) {
    super(context)
    this.#domain = domain
    this.#agentSpanId = agentSpanId
    this.#service = undefined
  }

  /** The service of a context this copy stamped (made on first use), or undefined. */
  static read(context) {
    if (!(#domain in context)) return undefined
    // Private fields are not properties: writing one on the frozen context is allowed.
    context.#service ??= new Observability(context.#domain, context.#agentSpanId)
    return context.#service
  }
}

/**
 * The realm registry (RT-4) is a WeakMap, as every SDK copy expects. When this copy creates
 * it, it also answers for the contexts this copy stamped, so an Agent call costs no WeakMap
 * insertion (an ephemeron write the young-generation GC then has to revisit).
 */
class ObservabilityRegistry extends WeakMap {
  get(key) {
    const service = super.get(key)
    if (service !== undefined || typeof key !== "object" || key === null) return service
    return ObservabilityStamp.read(key)
  }

  has(key) {
    return this.get(key) !== undefined
  }
}

export const observabilityServices = realmSingleton(
  "@aml-jsx/sdk/agent-observability-services",
  () => new ObservabilityRegistry(),
  (value) => value instanceof WeakMap,
  "AML Agent observability services registry has an invalid global value",
)

const stampable = observabilityServices instanceof ObservabilityRegistry

/**
 * Attaches the observability service of one Agent call to its context, before the context
 * is frozen. Into a registry another copy created, the service is stored eagerly.
 */
export function attachObservability(context, domain, agentSpanId) {
  if (stampable) new ObservabilityStamp(context, domain, agentSpanId)
  else observabilityServices.set(context, new Observability(domain, agentSpanId))
}

export const structuredOutputServices = realmSingleton(
  "@aml-jsx/sdk/agent-structured-output-services",
  () => new WeakMap(),
  (value) => value instanceof WeakMap,
  "AML Agent structured-output services registry has an invalid global value",
)

/** The observability service of a context, or undefined for contexts AML did not create. */
export function observabilityOf(context) {
  if ((typeof context !== "object" && typeof context !== "function") || context === null) return undefined
  return observabilityServices.get(context)
}

/**
 * An observability service writing to `domain` under the Agent span `agentSpanId`. A class
 * with prototype methods rather than closures: one is made per Agent call, on the hot path.
 */
class Observability {
  #domain
  #agentSpanId

  constructor(domain, agentSpanId) {
    this.#domain = domain
    this.#agentSpanId = agentSpanId
    Object.freeze(this)
  }

  closeSpan(spanId, attributes, sensitive) {
    this.#domain.closeSpan(spanId, false, undefined, attributes, sensitive)
  }

  failSpan(spanId, error) {
    this.#domain.closeSpan(spanId, true, error)
  }

  openSpan(name, attributes, sensitive, parentSpanId) {
    return this.#domain.openSpan("agent", name, parentSpanId ?? this.#agentSpanId, { attributes, sensitive })
  }

  point(spanId, name, attributes, sensitive) {
    this.#domain.point(spanId, undefined, name, attributes, sensitive)
  }

  points(list) {
    this.#domain.points(list)
  }

  /** 0 untraced, 1 traced without any content listener, 2 some listener takes content. */
  traceDetail() {
    const domain = this.#domain
    if (!domain.tracing) return 0
    const content = (entry) => entry.captureContent
    return domain.runtimeListeners.trace.some(content) || domain.local.trace.some(content) ? 2 : 1
  }
}

