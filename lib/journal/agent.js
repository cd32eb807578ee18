// A ready Agent in a journaled evaluation (docs/JOURNAL.md): answered from the journal when
// its position holds an entry for the same request digest, otherwise run as usual (and
// counted against maxAgentCalls, which only counts real provider calls) and recorded once it
// settled. An evaluation without a journal never reaches this file.
//
// agentJournalStep runs first, before runAgent builds anything: the engine computes the key
// and digest from the Agent's plan and, for a plain-text entry, replays the Agent itself
// (src/hot_path/journal.rs) — no request, provider call, scheduler slot or promise. Everything
// else (recording, divergence, structured answers, Loop state calls) comes back to
// runJournaledAgent once runAgent built the request; a plain-text Agent is recorded on the
// plain provider path (lib/journal/record.js).
//
// A replayed Agent keeps its span (with `journal.replayed: true` and a `journal.replay`
// event), its place in the output and its Loop state patches: the `aml_set_state` calls the
// provider made are part of the entry and are applied again, through the same Tool, so a
// Loop's state advances exactly as it did.

import { reportUsage } from "../agents/usage.js"
import { callAgentProvider, createExecutionContext, readText } from "../agents/call.js"
import { failDirect, stepFailure } from "../agents/direct.js"
import { structuredOutputServices } from "../agents/services.js"
import { masked } from "../core/component-scope.js"
import { agentExtra } from "./digest.js"
import { recordTextAgent } from "./record.js"
import { journalMarkReplayed } from "../core/native.js"
import { withStagedSkills } from "../skill/staging.js"
import { snapshotJson } from "../schema/stable-json.js"

function readStructured(response) {
  return response.structured
}

/** Runtime-owned Tools (the Loop's state Tool) among `request.tools`, by index. */
function runtimeTools(domain, refs) {
  const found = []
  for (let i = 0; i < refs.length; i++) {
    if (typeof domain.tools[refs[i]].instrument === "function") found.push(i)
  }
  return found
}

/** The provider's request, with runtime-owned Tools recording their successful inputs. */
function recordingRequest(request, owned, calls) {
  if (owned.length === 0) return request
  const tools = [...request.tools]
  for (const index of owned) {
    const tool = tools[index]
    const execute = async (input, context) => {
      const output = await tool.execute(input, context)
      try {
        calls.push(snapshotJson(input, "Tool input"))
      } catch {
        // The Tool accepted it, so it was JSON; nothing to record otherwise.
      }
      return output
    }
    tools[index] = Object.freeze({ ...tool, execute })
  }
  return Object.freeze({ ...request, tools: Object.freeze(tools) })
}

async function replayStateCalls(request, owned, calls) {
  if (!Array.isArray(calls) || calls.length === 0 || owned.length === 0) return
  const tool = request.tools[owned[0]]
  for (const input of calls) await tool.execute(input, undefined)
}

/** The provider's answer; the caller holds the concurrency slot and releases it once the step is recorded. */
async function callProvider(domain, task, entry, structured, request, label, lease, skillRefs) {
  // Built only for a real call: a replay has no provider to hand it to.
  const context = createExecutionContext(domain, request.trace, entry.sandbox)
  if (structured !== undefined) structuredOutputServices.set(context, structured.service)
  const local = structured !== undefined || domain.localTasks[task] > 0
  try {
    return skillRefs.length === 0
      ? await callAgentProvider(domain, local, entry.provider, request, context, label)
      : await withStagedSkills(
          domain,
          skillRefs.map((ref) => domain.skills[ref]),
          () => callAgentProvider(domain, local, entry.provider, request, context, label),
        )
  } finally {
    lease.open = false
  }
}

/**
 * The journal's first look at the ready Agent on top of `task`: the engine's next step code
 * when it replayed the Agent natively, else -1 (runAgent goes on and hands over to
 * runJournaledAgent with the lookup status the engine found).
 */
export function agentJournalStep(domain, task, structured) {
  const session = domain.journal
  const step = session.agentStep(task, agentExtra(domain, task, structured))
  if (step >= 0) return step
  // -1 (no entry), -2 (a divergence), or -3 - slot (a matching entry to replay here).
  session.step = step <= -3 ? -3 - step : step
  return -1
}

const OP_DONE = 0
const TRACE_PENDING = 16

/** The text of a direct task (lib/agents/direct.js) whose Agent completed with step `code`. */
function directText(domain, task, code) {
  if ((code & 15) !== OP_DONE) throw stepFailure(domain, task, code)
  if ((code & TRACE_PENDING) !== 0) domain.flushTrace()
  return domain.native.finish(task)
}

/** runJournaledAgent's `running` step code as the one-call path's text (runTextAgent). */
function settleJournaledText(domain, task, running, settled) {
  const failed = (error) => {
    failDirect(domain, task, error)
    settled(true, error)
    return error
  }
  return running.then(
    (code) => {
      let text
      try {
        text = directText(domain, task, code)
      } catch (error) {
        throw failed(error)
      }
      settled(false)
      return text
    },
    (error) => {
      throw failed(error)
    },
  )
}

/**
 * Same contract as runAgent: resolves with the engine's next step code; for the one-call
 * path (`direct` is runTextAgent's `settled` callback, else false) with the task's text.
 */
export function runJournaledAgent(domain, task, entry, structured, request, label, lease, refs, skillRefs, direct) {
  const session = domain.journal
  const status = session.step
  session.step = undefined
  // status: the entry's slot (same request), -2 (another request: divergence) or -1 (none).
  if (status < 0 && structured === undefined && skillRefs.length === 0 && runtimeTools(domain, refs).length === 0) {
    const { spanId, parentSpanId } = request.trace
    if (status === -2) session.diverged(spanId, parentSpanId, "agent", session.stepIdentity(task)[0])
    try {
      session.reserveCall(spanId)
    } catch (error) {
      lease.open = false
      const rejected = Promise.reject(error)
      return direct === false ? rejected : settleJournaledText(domain, task, rejected, direct)
    }
    return recordTextAgent(domain, task, entry, request, label, lease, direct)
  }
  const running = runJournaled(domain, task, entry, structured, request, label, lease, refs, skillRefs, status)
  return direct === false ? running : settleJournaledText(domain, task, running, direct)
}

/** Replays in JS (structured, Loop state calls) or runs and records any other Agent. */
async function runJournaled(domain, task, entry, structured, request, label, lease, refs, skillRefs, status) {
  const session = domain.journal
  const native = domain.native
  const { spanId, parentSpanId } = request.trace
  const [key, digest] = session.stepIdentity(task)
  const replay = status >= 0
  const owned = runtimeTools(domain, refs)
  let response
  let stateCalls
  if (replay) {
    journalMarkReplayed(native.id, task)
    session.replayed(spanId, parentSpanId, "agent", key)
    const recordedValue = session.entry(status).value
    response = recordedValue.structured === undefined ? recordedValue : { structured: recordedValue.structured, text: "" }
    const calls = recordedValue.stateCalls
    try {
      if (calls !== undefined) await replayStateCalls(request, owned, calls)
    } finally {
      lease.open = false
    }
    // As after a live call: an abort that landed meanwhile wins over the recorded answer.
    if (domain.signal.aborted) throw domain.signal.reason
  } else {
    if (status === -2) session.diverged(spanId, parentSpanId, "agent", key)
    try {
      session.reserveCall(spanId)
    } catch (error) {
      lease.open = false
      throw error
    }
    stateCalls = owned.length === 0 ? undefined : []
    const providerRequest = recordingRequest(request, owned, stateCalls)
    let recorded
    const waiting = domain.agentSlot(task, label)
    if (waiting !== undefined) await waiting
    try {
      response = await callProvider(domain, task, entry, structured, providerRequest, label, lease, skillRefs)
      recorded = await settleAndRecord(domain, task, structured, response, label, stateCalls, key, digest)
    } finally {
      // Only now: a queued Agent starts once this step's record is durable (docs/JOURNAL.md).
      domain.releaseAgentSlot()
    }
    return native.agentDone(task, recorded.text, recorded.output)
  }
  const { text, output } = await settle(domain, structured, response, label, false)
  // A replayed step's recorded usage counts again (issue 37): a resumed run cannot exceed maxTokens.
  reportUsage(domain, task, session.entry(status).value, label)
  return native.agentDone(task, text, output)
}

/** The accepted answer of a live call, recorded: `{ text, output }` for agentDone. */
async function settleAndRecord(domain, task, structured, response, label, stateCalls, key, digest) {
  const settled = await settle(domain, structured, response, label, true)
  const value = settled.value
  if (stateCalls !== undefined && stateCalls.length > 0) value.stateCalls = Object.freeze(stateCalls)
  const usage = reportUsage(domain, task, response, label)
  if (usage !== undefined) value.usage = usage
  const pending = domain.journal.record(key, "agent", digest, value)
  if (pending !== undefined) await pending
  return settled
}

/** Reads (and for structured output accepts) `response`; `live`: also the value to record. */
async function settle(domain, structured, response, label, live) {
  let text = ""
  let output
  let value
  if (structured !== undefined) {
    const accepted = await structured.accept(response, label)
    output = structured.output(accepted)
    if (live) value = { structured: snapshotJson(masked(readStructured, response), "Agent structured output") }
  } else {
    text = masked(readText, response, label)
    output = domain.traceContent ? text : ""
    if (live) value = { text }
  }
  return { output, text, value }
}
