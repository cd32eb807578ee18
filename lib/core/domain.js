// The JS half of one evaluation domain: the native frame machine, the caller's signal,
// object identities for cycle tracking, the evaluation-local listeners, nested and local
// tasks, awaits raced against the signal and the JS side of the Agent scheduler. Trace
// delivery and driver-owned spans are its base class (domain-trace.js).

import { randomUUID } from "node:crypto"

import { DirectAgentCall } from "../agents/agent-call.js"
import { textAgentPrompt } from "../agents/direct.js"
import { runTextAgent } from "../agents/run.js"
import { enterLocalText } from "../journal/direct.js"
import { DomainTrace } from "./domain-trace.js"
import { runTask } from "./driver.js"
import { ROOT_ENV } from "./env.js"
import { EvaluationError } from "../errors/errors.js"
import { callJournaledTool } from "../journal/tool.js"
import { ListenerRegistry } from "./listeners.js"
import { NativeEvaluation } from "./native.js"
import { nodeIdentity } from "./node.js"
import { nativeLimits } from "./runtime-options.js"
import { evaluateStructured } from "../schema/structured.js"
import { runToolSpan } from "../tools/instrumentation.js"
import { TraceDispatcher } from "../observability/trace-events.js"
import { TRACE_BATCH_STEPS } from "../observability/trace-sink.js"

/** How long an aborted provider call may take to settle before AML abandons it. */
export const PROVIDER_ABORT_GRACE_MS = 10_000

/**
 * Nested tasks start synchronously (a synchronous tree allocates no promise per value) until
 * this many are starting inside one another on the JS stack; deeper ones start in a
 * microtask, so a synchronous component chain calling evaluate() never overflows the stack.
 */
const MAX_SYNC_NESTING = 32
let syncNesting = 0

const macrotask = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Settles like `promise`; until then its `reject` is in `pending`, so an abort (which
 * rejects everything in the set) can settle it first. `race` and `awaitProvider` alike.
 */
function settleTracked(pending, promise) {
  return new Promise((resolve, reject) => {
    pending.add(reject)
    promise.then(
      (value) => {
        pending.delete(reject)
        resolve(value)
      },
      (error) => {
        pending.delete(reject)
        reject(error)
      },
    )
  })
}

export class EvaluationDomain extends DomainTrace {
  /**
   * `abortable` is false when the caller passed no signal: the internal signal can never
   * abort, so awaits skip the abort race entirely.
   */
  constructor(runtimeListeners, options, signal, abortable = true) {
    super()
    this.options = options
    this.signal = signal
    this.abortable = abortable
    /** AML's own signal is handed to many provider calls: its listener limit is lifted (lib/agents/call.js). */
    this.signalShared = false
    /** Rejecters of the awaits currently raced against the signal (one listener in total). */
    this.abortRacers = new Set()
    this.runId = randomUUID()
    this.native = new NativeEvaluation(
      nativeLimits(options.limits),
      options.allowedTools ?? null,
      options.system,
      options.allowedMcpServers ?? null,
    )
    // maxConcurrentAgents 0: the native scheduler grants every request and never queues,
    // so the Agent paths skip both of its crossings (agentSlot, releaseAgentSlot).
    this.unboundedAgents = options.limits.maxConcurrentAgents === 0
    this.closed = false
    /** The maxTokens stop (runtime.js `budgeted`): its controller, and the error it aborted with. */
    this.budget = undefined
    this.budgetError = undefined
    this.runtimeListeners = runtimeListeners
    this.local = new ListenerRegistry(() => this.refreshTracing())
    this.events = this.local.subscriber()
    this.trace = new TraceDispatcher(this.runId, [runtimeListeners, this.local], options.onTraceError)
    this.identities = new WeakMap()
    this.nextIdentity = 1
    /** Whether trace records are made: some trace listener, or a run recorder's tap. */
    this.tracing = false
    /** Whether some JS trace listener (or record sink) takes records from the engine. */
    this.traceListened = false
    /** Run recorders fed inside the engine (lib/studio/recorder.js), and whether one keeps content. */
    this.recorders = []
    this.recorderContent = false
    /** Whether some trace consumer captures content: only then is content sent to the engine. */
    this.traceContent = false
    /** The parent span id of the last one-call Agent (lib/agents/direct.js textAgentParent). */
    this.lastParentSpanId = undefined
    /** True while every trace listener is a record sink: records are drained in batches. */
    this.traceBatched = false
    this.traceCredit = TRACE_BATCH_STEPS
    this.traceImmediate = undefined
    this.drainTraceNow = () => this.drainTrace()
    this.disposed = false
    /** A trace listener's span runner (span-runner.js), or undefined: user code then runs plainly. */
    this.spanRunner = undefined
    /** Tool ports granted in this domain; the engine refers to them by index. */
    this.tools = []
    /** Frozen AgentMcpServer entries granted in this domain; the engine refers to them by index. */
    this.mcpServers = []
    /** <Skill> packages read in this domain (lib/skill/package.js); the engine refers to them by index. */
    this.skills = []
    /**
     * Nested tasks (component-local evaluate) still running, but for one-call Agents
     * (evaluateLocal): those are only in their scope's `pending`, and this holds the scopes
     * with some in flight (ComponentScope.direct), so a wide fan-out adds no entry here per Agent.
     */
    this.running = new Set()
    this.directScopes = new Set()
    /** Provider calls to abandon PROVIDER_ABORT_GRACE_MS after an abort. */
    this.providerCalls = new Set()
    /** Structured evaluations by task id (see structured.js). */
    this.structured = new Map()
    /** Queued Agents by task id: `{ resolve, reject, label }`. */
    this.slotWaiters = new Map()
    /**
     * Component-local evaluate() tasks: by task id, the number of the run that owns it (0:
     * none). An Agent cancelled in one rejects with its wrapper (lib/agents/run.js). Ids are
     * reused, so only the owning run clears one. An array: ids are small and dense.
     */
    this.localTasks = []
    this.lastLocalRun = 0
    /** The evaluation's JournalSession (lib/journal/session.js), only when evaluate() got a journal. */
    this.journal = undefined
    /** The PROVIDER_ABORT_GRACE_MS timer, cleared when the evaluation closes. */
    this.graceTimer = undefined
    /**
     * Set when that timer fired: the provider calls still pending were abandoned with the
     * reason. Such a call did not fail, so a root Agent rethrows the reason (lib/agents/call.js).
     */
    this.abandonedProviders = false
    this.onAbort = () => {
      this.cancelQueuedAgents()
      const reason = signal.reason
      const racers = [...this.abortRacers]
      this.abortRacers.clear()
      for (const reject of racers) reject(reason)
      if (this.providerCalls.size > 0) {
        this.graceTimer = setTimeout(() => {
          this.graceTimer = undefined
          this.abandonedProviders = true
          const calls = [...this.providerCalls]
          this.providerCalls.clear()
          for (const abandon of calls) abandon(reason)
        }, PROVIDER_ABORT_GRACE_MS)
        this.graceTimer.unref?.()
      }
    }
    if (abortable) signal.addEventListener("abort", this.onAbort, { once: true })
    this.refreshTracing()
  }

  /**
   * A stable integer per object, so the engine can track cycles by identity: odd numbers,
   * disjoint from the even ones this copy's nodes carry from their creation (node.js).
   */
  identity(object) {
    let id = this.identities.get(object)
    if (id === undefined) {
      id = this.nextIdentity
      this.nextIdentity += 2
      this.identities.set(object, id)
    }
    return id
  }

  /** A node's identity: its creation number, or an object identity for foreign nodes. */
  nodeIdentity(node) {
    const id = nodeIdentity(node)
    return id !== 0 ? id : this.identity(node)
  }

  /**
   * Runs `task` (already created by the engine) over `value`. Callers outside the core (the
   * Loop's render) start tasks through the domain so they need not import the driver.
   */
  runTask(task, value, env) {
    return runTask(this, task, value, env)
  }

  evaluateRoot(value) {
    return runTask(this, this.native.newTask(null), value, ROOT_ENV)
  }

  /**
   * Starts `value` as a nested task of `parentTask`. `scope` is the ComponentScope whose
   * `evaluate()` started it, if any: its bookkeeping shares this task's one settle reaction
   * (each promise also runs the AsyncLocalStorage hooks on Node 20).
   */
  evaluateNested(parentTask, value, env, scope) {
    // After an abort the parent task may already have failed (its await rejected with the
    // reason while the component kept running): reject like any frame would, without
    // asking the engine for a child of a dead task.
    if (this.signal.aborted) {
      const rejected = Promise.reject(this.signal.reason)
      if (scope !== undefined) {
        const order = scope.started++
        rejected.then(undefined, (error) => scope.nestedFailed(rejected, error, order))
      }
      return rejected
    }
    const task = this.native.newTask(parentTask)
    // Marked before the task starts: it runs synchronously up to its first await.
    const local = this.localTasks
    const owner = ++this.lastLocalRun
    local[task] = owner
    let running
    if (syncNesting >= MAX_SYNC_NESTING) {
      running = Promise.resolve().then(() => runTask(this, task, value, env))
    } else {
      syncNesting++
      try {
        running = runTask(this, task, value, env)
      } finally {
        syncNesting--
      }
    }
    const tasks = this.running
    tasks.add(running)
    const forget = () => {
      tasks.delete(running)
      if (local[task] === owner) local[task] = 0
    }
    if (scope === undefined) {
      running.then(forget, forget)
    } else {
      const order = scope.started++
      running.then(
        () => {
          forget()
          scope.pending.delete(running)
        },
        (error) => {
          forget()
          scope.nestedFailed(running, error, order)
        },
      )
    }
    return running
  }

  /**
   * `evaluate(value)` from the component whose ComponentScope is `scope`: the promise its
   * caller gets. The nested task's settle reaction does the scope's bookkeeping (track()
   * in component-scope.js); a text-only Agent does it inside its own (runTextAgent, its
   * DirectAgentCall).
   */
  evaluateLocal(scope, value) {
    // Without a caller's signal (`abortable` false) the internal one never aborts: the
    // getter is skipped on the hot paths.
    const prompt = this.abortable && this.signal.aborted ? undefined : textAgentPrompt(this, value, scope.env)
    const pending = (scope.pending ??= new Map())
    if (prompt === undefined) {
      const promise = this.evaluateNested(scope.task, value, scope.env, scope)
      const caller = promise.then()
      pending.set(promise, caller)
      return caller
    }
    let task
    let entered
    // A recording-only journal (lib/journal/session.js) has nothing to replay: the plain path.
    if (this.journal === undefined || this.journal.recordOnly) task = this.native.newTask(scope.task)
    else {
      // Journaled (docs/JOURNAL.md): created, entered and perhaps replayed in one call; a
      // replayed Agent has settled, so nothing is left to track (lib/journal/direct.js).
      entered = enterLocalText(this, scope.task, value, prompt)
      if (typeof entered === "string") return Promise.resolve(entered)
      task = entered[0]
    }
    const local = this.localTasks
    const owner = ++this.lastLocalRun
    local[task] = owner
    // The call's state, whose reaction also does this bookkeeping (lib/agents/agent-call.js).
    const call = new DirectAgentCall(scope, task, owner, scope.started++)
    let running
    try {
      running = runTextAgent(this, task, value, prompt, call, entered)
    } catch (error) {
      // Failed before its provider call: bookkeeping as for any nested task, and the
      // caller's own promise, unobserved, is the caller's unhandled rejection.
      if (local[task] === owner) local[task] = 0
      const order = call.order
      const rejected = Promise.reject(error)
      rejected.then(undefined, (reason) => scope.nestedFailed(rejected, reason, order))
      const caller = rejected.then()
      pending.set(rejected, caller)
      return caller
    }
    // No AML code observes `running`: it is the caller's promise itself.
    call.running = running
    if (scope.direct++ === 0) this.directScopes.add(scope)
    pending.set(running, running)
    return running
  }

  /**
   * Waits until no nested task is running. Only an abort can leave nested tasks behind the
   * root (a component's join waits for them otherwise); each of them stops at its next
   * await, and provider calls are bounded by PROVIDER_ABORT_GRACE_MS, so this is bounded.
   */
  async settleTasks() {
    while (this.running.size > 0 || this.directScopes.size > 0) await Promise.allSettled(this.tasksInFlight())
  }

  /** The promises of the nested tasks still running (settleTasks). */
  tasksInFlight() {
    const tasks = [...this.running]
    // A one-call Agent's entry is its caller's promise itself (evaluateLocal); no other is.
    for (const scope of this.directScopes) {
      for (const [promise, caller] of scope.pending) if (promise === caller) tasks.push(promise)
    }
    return tasks
  }

  /** `evaluate(value, schema)` from the component on top of `scope.task` (structured.js). */
  evaluateStructured(scope, value, schema) {
    return evaluateStructured(this, scope.task, value, schema, scope.env)
  }

  /** A callable Tool invoked by the component on top of `task`: a `tool` span under it. */
  callTool(task, port, input) {
    if (this.signal.aborted) return Promise.reject(this.signal.reason)
    if (this.journal !== undefined) return callJournaledTool(this, task, port, input)
    return runToolSpan(this, port, input, this.native.currentSpan(task), this.signal)
  }

  /**
   * Awaits a component's result (`promise`, its outcome joined with its nested work). An
   * abort does not reject at once (RT-2, LIM-2): the component's nested evaluations stop
   * at their next await, so AML waits for them, then one macrotask for the component to
   * react. A component that settled by then gives its joined outcome (e.g. the Agent
   * cancellation errors); one still pending is abandoned with the signal's reason.
   */
  awaitComponent(promise, scope) {
    if (!this.abortable) return promise
    return new Promise((resolve, reject) => {
      let settled = false
      promise.then(
        (value) => {
          settled = true
          this.abortRacers.delete(onAbort)
          resolve(value)
        },
        (error) => {
          settled = true
          this.abortRacers.delete(onAbort)
          reject(error)
        },
      )
      const onAbort = async (reason) => {
        while (!settled && scope.pending !== null && scope.pending.size > 0) {
          await Promise.allSettled([...scope.pending.keys()])
        }
        if (!settled) await macrotask()
        if (!settled) reject(reason)
      }
      if (this.signal.aborted) onAbort(this.signal.reason)
      else this.abortRacers.add(onAbort)
    })
  }

  /** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. */
  race(promise) {
    if (!this.abortable) return promise
    const signal = this.signal
    if (signal.aborted) {
      promise.then(undefined, () => {})
      return Promise.reject(signal.reason)
    }
    return settleTracked(this.abortRacers, promise)
  }

  /**
   * Awaits a provider call. Unlike `race`, an abort does not abandon it at once: the
   * provider owns the signal and must settle (releasing its session) before AML moves on,
   * so its cleanup spans land inside the Agent span. A provider that ignores the abort is
   * abandoned after PROVIDER_ABORT_GRACE_MS, so cancellation can never hang.
   */
  awaitProvider(promise) {
    if (!this.abortable) return promise
    if (this.signal.aborted) return promise
    return settleTracked(this.providerCalls, promise)
  }

  structuredFor(task) {
    if (this.structured.size === 0) return undefined
    const controller = this.structured.get(task)
    // Task ids are reused: only a task the engine still marks structured owns the entry.
    return controller !== undefined && this.native.isStructured(task) ? controller : undefined
  }

  /**
   * maxTokens was reached (issue 37; `message` is the engine's): the evaluation stops as on
   * cancellation, with that EvaluationError as the reason, so running provider calls see
   * their signal abort, queued Agents never start and cleanup runs. Only a domain with a
   * budget has the controller (runtime.js); the engine's rejection of the Agent that reached
   * it is answered with this same error object (engineError).
   */
  stopForBudget(message) {
    if (this.budget === undefined || this.budget.signal.aborted) return
    this.budgetError = new EvaluationError(message)
    this.budget.abort(this.budgetError)
  }

  /** Resolves when `task` holds a provider slot (FIFO, maxConcurrentAgents). */
  agentSlot(task, label) {
    if (this.abortable && this.signal.aborted) {
      return Promise.reject(
        new EvaluationError(`${label} was cancelled before provider execution`, { cause: this.signal.reason }),
      )
    }
    if (this.unboundedAgents || this.native.scheduleAgent(task)) return undefined
    return new Promise((resolve, reject) => this.slotWaiters.set(task, { label, reject, resolve }))
  }

  releaseAgentSlot() {
    if (this.unboundedAgents) return
    const next = this.native.releaseAgentSlot()
    if (next < 0) return
    const waiter = this.slotWaiters.get(next)
    this.slotWaiters.delete(next)
    waiter?.resolve()
  }

  cancelQueuedAgents() {
    const reason = this.signal.reason
    for (const task of this.native.drainAgentQueue()) {
      const waiter = this.slotWaiters.get(task)
      this.slotWaiters.delete(task)
      waiter?.reject(
        new EvaluationError(`${waiter.label} was cancelled before provider execution`, { cause: reason }),
      )
    }
  }

  /** Frees the native domain (runtime.js, when evaluate() settles). */
  dispose() {
    this.disposed = true
    if (this.traceImmediate !== undefined) clearImmediate(this.traceImmediate)
    this.traceImmediate = undefined
    this.native.dispose()
  }

  close() {
    if (this.graceTimer !== undefined) {
      clearTimeout(this.graceTimer)
      this.graceTimer = undefined
    }
    this.closed = true
    this.local.closed = true
    this.signal.removeEventListener("abort", this.onAbort)
  }
}
