// The runtime-owned `aml_set_state` Tool of one <Loop> iteration (INVENTORY LP-1, SPEC §12).
//
// The engine grants it to the render's selected Agent (crates/aml-engine/src/loop_render.rs)
// by its index in `domain.tools`; runAgent asks this entry for its `request.tools` wrapper
// (`instrument`, see grantedTool in lib/tools/instrumentation.js) instead of instrumenting a
// registered port, because its lifetime and errors are the Loop's:
// - calls stage patches privately; state never changes during the Agent session;
// - calls are serialised in invocation order (one promise chain), so each patch is merged
//   into the state the previous one staged and validated as one atomic proposal;
// - the capability expires when its Agent's provider call returns (the lease runAgent
//   closes): a call made — or still queued, or still validating — after that rejects.
// Each call still gets its `tool` span under the Agent span (runToolSpan).

import { EvaluationError } from "../errors/errors.js"
import { deepEqual, isJsonObject } from "./state.js"
import { snapshotJson } from "../schema/stable-json.js"
import { runToolSpan, toolSignal } from "../tools/instrumentation.js"

export const STATE_TOOL = "aml_set_state"

const INPUT_SCHEMA = snapshotJson(
  {
    additionalProperties: false,
    properties: { updates: { minProperties: 1, type: "object" } },
    required: ["updates"],
    type: "object",
  },
  "Loop state Tool input JSON Schema",
)

const noop = () => {}

function describe(name, keys) {
  const allowed = keys.length === 0 ? "(none)" : keys.join(", ")
  return (
    `Stage a "${name}" state patch for the next Loop iteration. ` +
    "State does not change during this Agent session. " +
    "Put coupled field changes in one updates object. " +
    `Allowed keys: ${allowed}. ` +
    "When staged state differs, finish the session so AML can commit it."
  )
}

/** Copies own keys; `__proto__` stays an ordinary data key, as in the snapshots. */
function assign(target, source) {
  for (const key of Object.keys(source)) {
    Object.defineProperty(target, key, { configurable: true, enumerable: true, value: source[key], writable: true })
  }
  return target
}

export class LoopStateTool {
  /** `loop` is `{ name, state }` (state: the LoopState pipeline); `snapshot` the iteration input. */
  constructor(domain, loop, snapshot) {
    this.domain = domain
    this.name = loop.name
    this.state = loop.state
    this.snapshot = snapshot
    /** The staged state; equal to `snapshot` until a patch changes it. */
    this.staged = snapshot
    this.queue = Promise.resolve()
    /** runAgent's lease of the selected Agent's provider call (set by `instrument`). */
    this.lease = undefined
    this.description = describe(loop.name, Object.keys(snapshot))
  }

  expired() {
    return new EvaluationError(`"${this.name}" state capability expired when its Agent finished`)
  }

  live() {
    return this.lease !== undefined && this.lease.open && !this.domain.closed
  }

  /** The provider-facing wrapper for the selected Agent's call (frozen ToolDefinition shape). */
  instrument(agentTrace, lease) {
    this.lease = lease
    const domain = this.domain
    const port = {
      invoke: (snapshot) => this.enqueue(snapshot),
      name: STATE_TOOL,
      snapshotInput: (input) => this.snapshotInput(input),
    }
    const execute = async (input, context) => {
      if (!this.live()) throw this.expired()
      return runToolSpan(domain, port, input, agentTrace.spanId, toolSignal(domain, context))
    }
    return Object.freeze({
      description: this.description,
      execute,
      inputSchema: INPUT_SCHEMA,
      kind: "javascript",
      name: STATE_TOOL,
    })
  }

  snapshotInput(input) {
    try {
      return snapshotJson(input, "Tool input")
    } catch (cause) {
      throw new EvaluationError(`"${this.name}" Loop state Tool input must be stable JSON`, { cause })
    }
  }

  /** Checks the input's shape now; merges and validates it in invocation order. */
  enqueue(snapshot) {
    let updates
    try {
      updates = this.readUpdates(snapshot)
    } catch (error) {
      return Promise.reject(error)
    }
    const applied = this.queue.then(() => this.apply(updates))
    this.queue = applied.then(noop, noop)
    return applied
  }

  readUpdates(snapshot) {
    const prefix = `"${this.name}" Loop state`
    if (!isJsonObject(snapshot) || Object.keys(snapshot).some((key) => key !== "updates")) {
      throw new EvaluationError(`${prefix} Tool input must contain only updates`)
    }
    const updates = snapshot.updates
    if (!isJsonObject(updates) || Object.keys(updates).length === 0) {
      throw new EvaluationError(`${prefix} updates must be a non-empty JSON object`)
    }
    const unknown = Object.keys(updates).filter((key) => !Object.hasOwn(this.snapshot, key))
    if (unknown.length > 0) throw new EvaluationError(`${prefix} cannot update unknown keys: ${unknown.join(", ")}`)
    return updates
  }

  async apply(updates) {
    if (!this.live()) throw this.expired()
    const proposal = assign(assign({}, this.staged), updates)
    const next = await this.state.normalize(proposal)
    // An asynchronous validator may settle after the Agent finished: too late to stage.
    if (!this.live()) throw this.expired()
    const changed = !deepEqual(next, this.staged)
    this.staged = next
    const result = { changed, updated: Object.keys(updates), willRepeat: !deepEqual(next, this.snapshot) }
    return snapshotJson(result, "Tool output")
  }
}
