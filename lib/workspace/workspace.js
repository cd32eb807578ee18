// <Workspace> (INVENTORY WS-1) through the scope protocol of docs/ARCHITECTURE.md:
//   enter:    placement (the engine: one per domain, top-level only) → props in the WS-1
//             order → one acquire(request), awaited like a provider call → lease validation,
//             with the three cancellation races → enterScope (span "Workspace", span-N).
//   complete: exactly once — save when the policy asks for this outcome and the run was not
//             cancelled, then release, always → scopeDone: the span closes afterwards.
//   cleanup:  on failure unwinding, the same completion with outcome "failure", aggregated
//             with the error being unwound.
// Descendants (Sandboxes, Files, Includes, nested evaluate()) see only the frozen
// WorkspaceMaterializationReference in the lexical environment — never save() or release().

import { masked } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { endResourceScope } from "../errors/cleanup-failure.js"
import { acceptWorkspaceLease, captureRelease } from "./lease.js"
import { readWorkspaceProps, saveRequest } from "./props.js"

const SAVE_AND_RELEASE = "Workspace save and release both failed"
const CANCELLED_COMPLETION = "AML evaluation was cancelled and Workspace completion failed"

async function acquire(provider, request) {
  return provider.acquire.call(provider.target, request)
}

async function callSave(lease, request) {
  await lease.save.call(lease.target, request)
}

async function callRelease(lease) {
  await lease.release.call(lease.target)
}

/**
 * A lease delivered after the evaluation stopped waiting (the provider ignored the abort
 * past the grace period): nobody will use it, so it is released. Failures have nowhere to go.
 */
function reclaimLate(pending) {
  pending.then(
    (lease) => {
      const release = captureRelease(lease)
      if (release !== undefined) masked(async () => release.call(lease)).catch(() => {})
    },
    () => {},
  )
}

/** Enters the <Workspace> node on top of `task`; resolves with the engine's step code. */
export async function enterWorkspace(domain, task, props, slot) {
  const native = domain.native
  const placement = native.claimWorkspace(task)
  if (placement !== null) throw new EvaluationError(placement)
  const plan = readWorkspaceProps(props, domain.options.workspaceProvider)
  const provider = plan.provider
  const name = provider.name
  const signal = domain.signal
  const request = Object.freeze({
    evaluationId: domain.runId,
    id: plan.id,
    load: plan.load,
    lock: plan.lock,
    save: plan.save !== false,
    signal,
  })

  const pending = masked(acquire, provider, request)
  let lease
  try {
    // Like a provider call: an abort does not abandon the acquisition at once, so a lease
    // the provider still delivers is given back instead of leaking (bounded by the grace).
    lease = await domain.awaitProvider(pending)
  } catch (error) {
    if (signal.aborted) {
      reclaimLate(pending)
      throw signal.reason
    }
    throw new EvaluationError(`Workspace provider "${name}" failed to acquire`, { cause: error })
  }
  // Validation also settles the races with a cancellation that lands meanwhile.
  const accepted = await masked(acceptWorkspaceLease, name, lease, signal)

  let completion
  const complete = (outcome) => {
    completion ??= completeOnce(domain, plan.save, accepted, outcome)
    return completion
  }
  slot.env = slot.env.withWorkspace(
    Object.freeze({
      cwd: plan.cwd,
      directory: accepted.directory,
      handle: accepted.handle,
      leaseId: accepted.id,
      provider: Object.freeze({ name }),
      workspaceId: plan.id,
      writeConcurrency: plan.writeConcurrency,
    }),
  )
  // Save and release on either outcome; a cancellation during them still decides it.
  endResourceScope(slot, domain, task, complete, () => completion !== undefined, CANCELLED_COMPLETION)
  // Installed before the span opens, so the lease is completed even if entering fails.
  return native.enterScope(task, "workspace", "Workspace", true, false, undefined, undefined)
}

/**
 * Save (when the policy covers this outcome and the run was not cancelled), then release,
 * always. Provider errors propagate unwrapped; both failing is one AggregateError.
 */
async function completeOnce(domain, save, lease, outcome) {
  const signal = domain.signal
  const errors = []
  if (save !== false && !signal.aborted && (save.on === "always" || outcome === "success")) {
    try {
      await masked(callSave, lease, saveRequest(save, outcome, signal))
    } catch (error) {
      errors.push(error)
    }
  }
  try {
    await masked(callRelease, lease)
  } catch (error) {
    errors.push(error)
  }
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, SAVE_AND_RELEASE)
}
