// Running one ready Agent (INVENTORY AG-1, AG-4, LIM-1): build the frozen request and
// execution context from the engine's plan, wait for a scheduler slot, call the provider
// with component evaluation masked, validate the response, hand the text back to the engine.

import { AgentCall, failedDirect, finishDirectText, finishText } from "./agent-call.js"
import { callAgentProvider, createExecutionContext, startProviderThen } from "./call.js"
import { failDirect, stepFailure, textAgentParent } from "./direct.js"
import { defaultEntry } from "./props.js"
import { structuredOutputServices } from "./services.js"
import { masked } from "../core/component-scope.js"
import { reportUsage } from "./usage.js"
import { EvaluationError } from "../errors/errors.js"
import { agentJournalStep, runJournaledAgent } from "../journal/agent.js"
import { enterJournaledTextAgent } from "../journal/direct.js"
import { withStagedSkills } from "../skill/staging.js"
import { nodeIdentity } from "../core/node.js"
import { grantedTool } from "../tools/instrumentation.js"

const EMPTY = Object.freeze([])

function callSupportsSandbox(check, target, session) {
  return check.call(target, session)
}

/**
 * The Sandbox handshake of the sandboxed Agent on top of `task` (AG-1), after its children
 * and before its budgets: the provider must answer exactly `true` for the effective
 * session. A provider without `supportsSandbox` cannot run inside a Sandbox.
 */
export function sandboxHandshake(domain, task, entry) {
  const provider = entry.provider
  const session = entry.sandbox
  const check = provider.supportsSandbox
  let supported = false
  if (check !== undefined) {
    try {
      supported = masked(callSupportsSandbox, check, provider.target, session) === true
    } catch (cause) {
      throw new EvaluationError(`Agent provider "${provider.name}" failed its Sandbox compatibility check`, { cause })
    }
  }
  if (!supported) {
    throw new EvaluationError(
      `Agent provider "${provider.name}" cannot run inside Sandbox provider "${session.provider.name}"`,
    )
  }
  return domain.native.agentHandshakeDone(task)
}

/**
 * Runs the Agent on top of `task`, whose entry (from readAgentProps) is `entry`.
 * Resolves with the engine's next step code (a journal replay returns it at once).
 */
export function runAgent(domain, task, entry, structured) {
  // A journaled evaluation (docs/JOURNAL.md) may replay the Agent before any request exists.
  if (domain.journal !== undefined) {
    const replayed = agentJournalStep(domain, task, structured)
    if (replayed >= 0) return replayed
  }
  const plan = domain.native.agentPlan(task)
  return runPlanned(domain, task, entry, structured, plan[0], plan[1], plan[2], plan[3], plan, false)
}

/**
 * Evaluates the text-only Agent `node` as the fresh nested task `task` on the one-call path
 * (lib/agents/direct.js) and returns the promise of the task's text, which no AML code observes:
 * `call` (a DirectAgentCall, lib/agents/agent-call.js) does the caller's bookkeeping inside
 * the settling reaction instead. A failure before the provider call is thrown (the task
 * already failed). In a journaled evaluation, `entered` is what enterLocalText
 * (lib/journal/direct.js) found.
 */
export function runTextAgent(domain, task, node, prompt, call, entered) {
  try {
    const provider = domain.options.agentProvider
    const entry = defaultEntry(provider)
    if (entered !== undefined) {
      // A journaled evaluation (docs/JOURNAL.md) entered it already (enterLocalText).
      const plan = enterJournaledTextAgent(domain, prompt, entered)
      if (typeof plan === "number") throw stepFailure(domain, task, plan)
      if (domain.tracing) domain.flushTrace()
      return runPlanned(domain, task, entry, undefined, plan[0], plan[1], plan[2], plan[3], undefined, call)
    }
    // The engine's `spanId \n parentSpanId \n system` line, read without a plan array.
    const line = domain.native.enterTextAgent(task, nodeIdentity(node), provider !== undefined, provider?.name, prompt)
    if (typeof line === "number") throw stepFailure(domain, task, line)
    const first = line.indexOf("\n")
    const second = line.indexOf("\n", first + 1)
    const spanId = line.slice(0, first)
    const parentSpanId = textAgentParent(domain, line, first, second)
    const system = line.slice(second + 1)
    if (domain.tracing) domain.flushTrace()
    // The prompt is the text child trimmed, as the engine trims it (String.prototype.trim and
    // aml_engine::js_trim share the ECMAScript whitespace set), so it does not cross back.
    return runPlanned(domain, task, entry, undefined, spanId, parentSpanId, prompt.trim(), system, undefined, call)
  } catch (error) {
    throw failDirect(domain, task, error)
  }
}

/**
 * Runs the ready Agent on top of `task`, planned as `spanId`, `parentSpanId`, `prompt` and
 * `system`; `plan` is the native agentPlan array when follow-ups may follow those four
 * (undefined on the one-call path). `direct` is false, or the DirectAgentCall of
 * runTextAgent: the task holds only this Agent, and the promise resolves with its text.
 */
function runPlanned(domain, task, entry, structured, spanId, parentSpanId, prompt, system, plan, direct) {
  const native = domain.native
  const provider = entry.provider
  const trace = Object.freeze({ parentSpanId, runId: domain.runId, spanId })
  const mcpRefs = domain.mcpServers.length === 0 ? EMPTY : native.agentMcp(task)
  const skillRefs = domain.skills.length === 0 ? EMPTY : native.agentSkills(task)
  const refs = domain.tools.length === 0 ? EMPTY : native.agentTools(task)
  // Granted Tools are usable only while this provider call runs (lib/tools/instrumentation.js);
  // without Tools nothing reads a lease.
  const lease = refs.length === 0 ? undefined : { open: true }
  const request =
    mcpRefs.length === 0 && skillRefs.length === 0 && refs.length === 0 && (plan === undefined || plan.length === 4) && entry.model === undefined && structured === undefined
      ? // The plain request in one literal: the same keys in the same order as below.
        { mcpServers: EMPTY, permissions: entry.permissions, prompt, system, tools: EMPTY, trace }
      : buildRequest(domain, entry, structured, prompt, system, plan, trace, lease, mcpRefs, skillRefs, refs)
  Object.freeze(request)
  // The call's state, and its failure label (`Agent "<provider>" (<spanId>)`).
  let call
  if (direct === false) {
    call = new AgentCall(domain, task, provider, spanId, lease, structured !== undefined || domain.localTasks[task] > 0)
  } else {
    call = direct
    call.spanId = spanId
    call.lease = lease
  }
  // Only an evaluation given a journal (docs/JOURNAL.md) takes this branch; a one-call Agent
  // of a recording-only one (lib/journal/session.js) is recorded by the engine as it lands,
  // and only its real call is counted here (the engine's maxAgentCalls is the session's).
  if (domain.journal !== undefined && (direct === false || !domain.journal.recordOnly)) {
    const settled = direct === false ? false : (failed, error) => direct.settled(failed, error)
    return runJournaledAgent(domain, task, entry, structured, request, call, lease ?? { open: true }, refs, skillRefs, settled)
  }
  if (domain.journal !== undefined) domain.journal.reserveCall(spanId)
  const context = createExecutionContext(domain, trace, entry.sandbox)
  if (structured !== undefined) structuredOutputServices.set(context, structured.service)
  const waiting = domain.agentSlot(task, call)
  if (waiting === undefined && skillRefs.length === 0 && structured === undefined) {
    // The common case: a slot at once, nothing staged, plain text; the reaction is the
    // call's own methods (no closure context per in-flight Agent).
    return startProviderThen(domain, provider, request, context, call.fulfilled.bind(call), call.rejected.bind(call))
  }
  const local = direct !== false || call.local
  const queued = runQueued(domain, task, waiting, skillRefs, structured, provider, request, context, lease, local, call, direct !== false)
  if (direct === false) return queued
  return queued.then(
    (text) => {
      direct.settled(false)
      return text
    },
    (error) => {
      throw failedDirect(domain, task, error, direct)
    },
  )
}

/** The AgentRequest of a plan with MCP servers, Skills, Tools, follow-ups, a model or an output. */
function buildRequest(domain, entry, structured, prompt, system, plan, trace, lease, mcpRefs, skillRefs, refs) {
  const request = {
    mcpServers: mcpRefs.length === 0 ? EMPTY : Object.freeze(mcpRefs.map((ref) => domain.mcpServers[ref])),
  }
  if (plan !== undefined && plan.length > 4) request.followUps = Object.freeze(plan.slice(4))
  if (entry.model !== undefined) request.model = entry.model
  if (structured !== undefined) request.output = structured.request
  request.permissions = entry.permissions
  request.prompt = prompt
  // Only with a package <Skill> (skill.js), so requests without one keep their shape.
  // Staged oversized <Include> files (include.js) share the staging but are not Skills.
  if (skillRefs.length > 0) {
    const skillEntries = skillRefs.filter((ref) => !domain.skills[ref].include).map((ref) => domain.skills[ref].entry)
    if (skillEntries.length > 0) request.skills = Object.freeze(skillEntries)
  }
  request.system = system
  request.tools =
    refs.length === 0 ? EMPTY : Object.freeze(refs.map((ref) => grantedTool(domain, domain.tools[ref], trace, lease)))
  request.trace = trace
  return request
}

/** The provider call of an Agent that waited for a slot, stages Skills or is structured. */
async function runQueued(domain, task, waiting, skillRefs, structured, provider, request, context, lease, local, label, direct) {
  if (waiting !== undefined) await waiting
  let response
  try {
    // Skill packages exist on disk only around the provider call (lib/skill/staging.js).
    response =
      skillRefs.length === 0
        ? await callAgentProvider(domain, local, provider, request, context, label)
        : await withStagedSkills(
            domain,
            skillRefs.map((ref) => domain.skills[ref]),
            () => callAgentProvider(domain, local, provider, request, context, label),
          )
  } finally {
    if (lease !== undefined) lease.open = false
    domain.releaseAgentSlot()
  }
  if (structured !== undefined) {
    const value = await structured.accept(response, label)
    reportUsage(domain, task, response, label)
    return domain.native.agentDone(task, "", structured.output(value))
  }
  return direct ? finishDirectText(domain, task, response, label) : finishText(domain, task, response, label)
}
