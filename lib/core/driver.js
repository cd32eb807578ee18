// The task driver: feeds one task's values to the Rust frame machine and performs the steps
// it asks for. JS keeps a mirror stack of the arrays and nodes the machine holds by
// identity; the machine's `height` tells it how far to truncate after pops.
//
// Hot path rules: no allocation per value beyond what the user's code allocates, one
// synchronous napi call per value, and no promise unless the tree is actually async.

import { engineError } from "./engine-error.js"
import { runAgent, sandboxHandshake } from "../agents/run.js"
import { ComponentScope, joinNested, storage } from "./component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { describeError } from "../errors/error-shape.js"
import { NODE_BRAND, PRIMITIVE_KIND } from "./node.js"
import { enterPrimitive } from "./primitive-protocol.js"
import { PRIMITIVE_LABELS, primitiveCode } from "./primitives.js"
import { settle } from "./thenable.js"

const OP_DONE = 0
const OP_READ = 1
const OP_INVOKE = 2
const OP_PRIMITIVE = 3
const OP_ERROR = 4
const OP_CHILDREN = 5
const OP_AGENT = 6
const OP_COMPLETE = 7
const OP_HANDSHAKE = 8
const OP_PARK = 9
const OP_RESUME = 10
const TRACE_PENDING = 16
const HEIGHT_SHIFT = 5

const isArray = Array.isArray

/** Marks a component result that is still settling (async component or joined nested work). */
class Pending {
  constructor(promise, scope) {
    this.promise = promise
    /** The ComponentScope whose nested work an abort waits for (domain.awaitComponent). */
    this.scope = scope
  }
}

/** The largest valid array length (2^32 - 1); the engine counts elements in a u32. */
const MAX_ARRAY_LENGTH = 4294967295
export const INVALID_PROPS = "AML element props must be an object"
export const INVALID_ARRAY_LENGTH = "AML cannot render an array whose length is not an integer from 0 to 4294967295"

/**
 * A signal can only abort between macrotasks, so a long synchronous tree yields to the event
 * loop every YIELD_EVERY values when the caller passed a signal (never otherwise).
 */
const YIELD_EVERY = 16384
const yieldTurn = () => new Promise((resolve) => setImmediate(resolve))

/** The error a failed task rethrows, boxed so no async return can adopt a thenable error. */
class Unwinding {
  constructor(error) {
    this.error = error
  }
}

/** Marks a component's synchronous non-renderable object result whose `then` was read. */
class Unrenderable {
  constructor(typeName) {
    this.typeName = typeName
  }
}

function callComponent(scope, type, props) {
  const result = type(props)
  if (result !== null && (typeof result === "object" || typeof result === "function")) {
    if (!isArray(result) && result.$$typeof !== NODE_BRAND) {
      scope.thenRead = true
      scope.then = result.then
    }
  }
  return result
}

/** Invokes a function component inside its ComponentScope (RT-2 lifetime rules). */
function invoke(domain, task, node, env) {
  const scope = new ComponentScope(domain, task, env)
  let result
  try {
    const runner = domain.spanRunner
    result =
      runner === undefined
        ? storage.run(scope, callComponent, scope, node.type, node.props)
        : runner(domain.runId, domain.native.currentSpan(task), () =>
            storage.run(scope, callComponent, scope, node.type, node.props),
          )
  } catch (error) {
    scope.active = false
    return settledJoin(scope, true, error, undefined)
  }
  const then = scope.then
  if (typeof then !== "function") {
    // Synchronous components lose access before their queued microtasks run.
    scope.active = false
    // `then` was read and is not callable: the object is not renderable, and it must not
    // be read a second time by the classifier.
    if (scope.thenRead) return settledJoin(scope, false, undefined, new Unrenderable(typeof result))
    return settledJoin(scope, false, undefined, result)
  }
  // The thenable's `then` runs inside the component's scope: evaluate() stays available to
  // it until it settles (RT-2).
  const promise = storage.run(scope, settle, result, then).then(
    (value) => {
      scope.active = false
      return joinNested(scope, false, undefined, value)
    },
    (error) => {
      scope.active = false
      return joinNested(scope, true, error, undefined)
    },
  )
  return new Pending(promise, scope)
}

function settledJoin(scope, failed, error, value) {
  const joined = joinNested(scope, failed, error, value)
  return scope.pending !== null && scope.pending.size > 0 ? new Pending(joined, scope) : joined
}

function componentName(type) {
  const name = type.name
  return typeof name === "string" && name.length > 0 ? name : "AnonymousComponent"
}

/**
 * Evaluates `value` as task `task` of `domain` and resolves with its text. `env` is the
 * lexical environment the task starts in (Context bindings, active Sandbox…; see env.js).
 * On failure the task's spans are closed with the error and the error is rethrown as is.
 */
export async function runTask(domain, task, value, env) {
  const native = domain.native
  const signal = domain.signal
  // The mirror stack: per frame the JS object, a cursor (arrays) or scratch slot
  // (primitives), and the lexical environment in effect inside the frame.
  const objects = []
  const cursors = []
  const envs = []
  const abortable = domain.abortable
  let alive = true
  // A Loop render task's selected Agent node and its environment, while the rest of the
  // render value is checked (crates/aml-engine/src/loop_render.rs).
  let parked
  let budget = YIELD_EVERY
  try {
    for (;;) {
      // Enter one value.
      let code
      for (;;) {
        if (abortable && --budget === 0) {
          budget = YIELD_EVERY
          await yieldTurn()
        }
        if (signal.aborted) {
          // A component result still settling is dropped here; observe its rejection so it
          // cannot surface as an unhandled rejection.
          if (value instanceof Pending) value.promise.then(undefined, () => {})
          throw signal.reason
        }
        const type = typeof value
        if (type === "string") {
          code = native.text(task, value)
        } else if (type === "number") {
          code = native.text(task, String(value))
        } else if (value === undefined || value === null || type === "boolean") {
          code = native.empty(task)
        } else if (type === "object" || type === "function") {
          if (isArray(value)) {
            // A Proxy of an array passes isArray with any `length`: check it before it
            // crosses as a u32 (-1 would wrap to 2^32 - 1).
            const length = value.length
            if (typeof length !== "number" || !(length >= 0 && length <= MAX_ARRAY_LENGTH) || length % 1 !== 0) {
              throw new EvaluationError(INVALID_ARRAY_LENGTH)
            }
            envs.push(objects.length === 0 ? env : envs[objects.length - 1])
            objects.push(value)
            cursors.push(0)
            code = native.array(task, domain.identity(value), length)
          } else if (value.$$typeof === NODE_BRAND) {
            envs.push(objects.length === 0 ? env : envs[objects.length - 1])
            objects.push(value)
            cursors.push(0)
            code = enterNode(domain, task, value)
          } else if (value instanceof Pending) {
            value = await domain.awaitComponent(value.promise, value.scope)
            continue
          } else if (value instanceof Unrenderable) {
            code = native.invalid(task, value.typeName)
          } else {
            const then = value.then
            if (typeof then === "function") {
              value = await domain.race(settle(value, then))
              continue
            }
            code = native.invalid(task, type)
          }
        } else {
          code = native.invalid(task, type)
        }
        break
      }
      // Perform steps until the machine wants another value.
      for (;;) {
        if ((code & TRACE_PENDING) !== 0) domain.flushTrace()
        const height = code >>> HEIGHT_SHIFT
        // Usually one frame popped: pop() stays in generated code, setting `length` does not.
        while (objects.length > height) {
          objects.pop()
          cursors.pop()
          envs.pop()
        }
        const op = code & 15
        if (op === OP_READ) {
          const top = height - 1
          value = objects[top][cursors[top]++]
        } else if (op === OP_INVOKE) {
          value = invoke(domain, task, objects[height - 1], envs[height - 1])
        } else if (op === OP_CHILDREN) {
          // A primitive may evaluate its children itself (Parallel): it leaves an empty
          // value in its slot instead.
          const slot = cursors[height - 1]
          value = slot !== 0 && slot.ownsChildren === true ? undefined : objects[height - 1].props.children
        } else if (op === OP_PRIMITIVE) {
          const slot = { env: envs[height - 1] }
          cursors[height - 1] = slot
          code = enterPrimitive(domain, task, objects[height - 1], slot)
          // Resource primitives (Sandbox acquisition) enter asynchronously.
          if (typeof code !== "number") code = await code
          // A scope primitive (Context Provider, Sandbox…) changes what its subtree sees.
          envs[height - 1] = slot.env
          continue
        } else if (op === OP_AGENT) {
          code = runAgent(domain, task, cursors[height - 1].entry, domain.structuredFor(task))
          // A journal replay answers at once (lib/journal/agent.js); a provider call is awaited.
          if (typeof code !== "number") code = await code
          continue
        } else if (op === OP_HANDSHAKE) {
          // A sandboxed Agent's children are done: its provider must accept the session.
          code = sandboxHandshake(domain, task, cursors[height - 1].entry)
          continue
        } else if (op === OP_PARK) {
          parked = [objects[height - 1], envs[height - 1]]
          code = native.loopPark(task)
          continue
        } else if (op === OP_RESUME) {
          objects.push(parked[0])
          cursors.push(0)
          envs.push(parked[1])
          code = native.loopResume(task)
          continue
        } else if (op === OP_DONE) {
          alive = false
          return native.finish(task)
        } else if (op === OP_COMPLETE) {
          // The scope on top finished its subtree: release it, run it, write it…
          code = await cursors[height - 1].complete(native.scopeInput(task))
          continue
        } else if (op === OP_ERROR) {
          // The engine keeps the frames: scopes are cleaned up below before spans close.
          throw engineError(domain, native.errorMessage(task))
        } else {
          throw new EvaluationError("AML evaluation has not started")
        }
        break
      }
    }
  } catch (caught) {
    let error = caught
    if (alive) {
      if (hasCleanup(cursors)) error = (await cleanupScopes(cursors, new Unwinding(error))).error
      const { type, message } = describeError(error)
      try {
        native.fail(task, type, message)
        domain.flushTrace()
      } catch {
        // The domain was already disposed (detached work after the run ended): there are
        // no spans left to close, and the original error is what the caller must see.
      }
    }
    throw error
  }
}

function hasCleanup(slots) {
  for (let i = slots.length - 1; i >= 0; i--) {
    const slot = slots[i]
    if (slot !== null && typeof slot === "object" && slot.cleanup !== undefined) return true
  }
  return false
}

/**
 * Failure unwinding: every scope still on the stack is cleaned up, innermost first, before
 * any span closes. A scope's `cleanup(error)` *rejects* with the error to keep unwinding
 * with (it may aggregate its own cleanup failure, with its documented message). Errors are
 * values: they travel rejected or boxed, never as an async return value, which would adopt
 * an error that happens to be a thenable.
 */
async function cleanupScopes(slots, unwinding) {
  for (let i = slots.length - 1; i >= 0; i--) {
    const slot = slots[i]
    if (slot !== null && typeof slot === "object" && slot.cleanup !== undefined) {
      try {
        // Older handlers resolve with the error to keep: accepted, but they can adopt.
        const kept = await slot.cleanup(unwinding.error)
        if (kept !== undefined) unwinding = new Unwinding(kept)
      } catch (next) {
        unwinding = new Unwinding(next)
      }
    }
  }
  return unwinding
}

function enterNode(domain, task, node) {
  const type = node.type
  if (typeof type !== "function") return domain.native.unknownElement(task)
  // Hand-built nodes: every protocol reads `props` (children, Agent props…).
  const props = node.props
  if (props === null || typeof props !== "object") throw new EvaluationError(INVALID_PROPS)
  const kind = type[PRIMITIVE_KIND]
  if (kind !== undefined) {
    const code = primitiveCode(kind)
    if (code < 0) return domain.native.unknownElement(task)
    // Primitives open their spans in their own protocol; the name is not needed here.
    return domain.native.node(task, domain.nodeIdentity(node), code, "")
  }
  // Named even when untraced: a trace listener added while the span is open gets its end.
  return domain.native.node(task, domain.nodeIdentity(node), -1, componentName(type))
}
