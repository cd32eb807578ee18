// <Loop> (INVENTORY LP-1, RT-1 maxStateTransitions, §2.3/§2.4; SPEC §12, draft): repeats
// fresh Agent sessions over immutable, schema-validated state snapshots.
//
// The Loop is a scope (a `loop` span "Loop", span-N) that evaluates nothing as children: when
// the engine completes it, `runLoop` runs the iterations. Each iteration
//   1. validates, snapshots and freezes the state (lib/loop/state.js);
//   2. calls `render({ iteration, state })` like a component invocation: with the Loop's
//      lexical environment, so useContext() and evaluate() work, nested work joined (RT-2);
//   3. evaluates the rendered value as a *render task* (a nested engine task): the engine
//      requires exactly one <Agent> outside of which there is no text and no other primitive,
//      and grants that Agent this iteration's `aml_set_state` Tool (lib/loop/state-tool.js);
//   4. returns the Agent's text when the staged state equals the snapshot; otherwise the
//      engine reserves a transition (maxStateTransitions, `loop.transition` on the Loop
//      span), the staged state is committed and the Agent text is dropped.
//
// Choices where the documents are silent (docs/ARCHITECTURE.md lists them): props are
// checked before the span opens (children, name, render, schema); `initial` is checked in
// the span. Selection precedes execution (LP-1): the render task parks its Agent node when
// it reaches it and walks the rest of the render value first, so trailing text or a second
// Agent rejects before any provider is called; later sibling components run before the
// Agent, whose ancestors' spans stay open around it (crates/aml-engine/src/loop_render.rs).

import { ComponentScope, joinNested, storage } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { LoopState, deepEqual } from "./state.js"
import { LoopStateTool } from "./state-tool.js"
import { NODE_BRAND } from "../core/node.js"
import { isNormalized } from "../checks/normalized.js"
import { captureSchema } from "../schema/standard-schema.js"
import { settle } from "../core/thenable.js"

/** Reads and checks the props, in the documented order. */
function readProps(props) {
  if (props.children !== undefined) throw new EvaluationError("<Loop> accepts render() instead of children")
  const given = props.name
  if (given !== undefined && !isNormalized(given)) {
    throw propTypeError("<Loop> name must be a non-empty normalized string", given)
  }
  const name = given ?? "Loop"
  const render = props.render
  if (typeof render !== "function") throw propTypeError("<Loop> render must be a function", render)
  // TypeErrors as for every Standard Schema (TL-1), labelled with the Loop's name. The JSON
  // Schema half is not needed: state never crosses to a model as a schema.
  const schema = captureSchema(props.schema, `<Loop name="${name}"> schema`)
  return { initial: props.initial, name, render, state: new LoopState(name, schema) }
}

function callRender(scope, render, context) {
  const result = render(context)
  // `then` is read once, inside the boundary, as for a component's returned value.
  if (result !== null && (typeof result === "object" || typeof result === "function")) {
    if (!Array.isArray(result) && result.$$typeof !== NODE_BRAND) scope.then = result.then
  }
  return result
}

/**
 * `render(context)` as a component-like invocation of the Loop's task: access lasts until
 * a returned thenable settles, then nested evaluations are joined (RT-2 semantics).
 */
async function renderValue(domain, task, render, context, env) {
  const scope = new ComponentScope(domain, task, env)
  let failed = false
  let error
  let value
  try {
    value = storage.run(scope, callRender, scope, render, context)
    const then = scope.then
    // Called inside the render's scope, like a component's returned thenable (RT-2).
    if (typeof then === "function") value = await domain.race(storage.run(scope, settle, value, then))
  } catch (caught) {
    failed = true
    error = caught
  }
  scope.active = false
  return joinNested(scope, failed, error, value)
}

/** Evaluates `value` as the render task of one iteration, under the Loop's span. */
function evaluateRender(domain, task, value, env, toolReference) {
  if (domain.signal.aborted) return Promise.reject(domain.signal.reason)
  const native = domain.native
  const child = native.newTask(task)
  native.setLoopRender(child, toolReference)
  const running = domain.runTask(child, value, env)
  // Tracked like component-local evaluate(), so an aborted run waits for it to stop.
  const tasks = domain.running
  tasks.add(running)
  const forget = () => tasks.delete(running)
  running.then(forget, forget)
  return running
}

async function runLoop(domain, task, loop, env) {
  let state = loop.initial
  for (let iteration = 1; ; iteration++) {
    const snapshot = await loop.state.normalize(state)
    const tool = new LoopStateTool(domain, loop, snapshot)
    const reference = domain.tools.push(tool) - 1
    const context = Object.freeze({ iteration, state: snapshot })
    const value = await renderValue(domain, task, loop.render, context, env)
    const text = await evaluateRender(domain, task, value, env, reference)
    const staged = tool.staged
    if (deepEqual(staged, snapshot)) return text
    const exceeded = domain.native.loopTransition(task, loop.name, iteration)
    if (exceeded !== null) throw new EvaluationError(exceeded)
    if (domain.tracing) domain.flushTrace()
    state = staged
  }
}

/** Enters a <Loop> node through the scope protocol. Returns the engine's step code. */
export function enterLoop(domain, task, node, slot) {
  const loop = readProps(node.props)
  const env = slot.env
  slot.ownsChildren = true
  slot.complete = async () => {
    const output = await runLoop(domain, task, loop, env)
    return domain.native.scopeDone(task, output, undefined, undefined)
  }
  return domain.native.enterScope(task, "loop", "Loop", true, false, undefined, undefined)
}
