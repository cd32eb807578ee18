// <Sandbox> (INVENTORY SB-1). An outer Sandbox acquires exactly one lease from its provider
// and releases it once, after its subtree settles; a nested Sandbox is a restrictive view of
// the parent session (narrower root, cwd or access) that acquires nothing. Both open a
// `sandbox` scope span ("Sandbox", `nested`), and both hand descendants only a frozen
// SandboxSession through the lexical environment — never acquire() or release().
//
// Lifecycle of an outer Sandbox, as the scope protocol of docs/ARCHITECTURE.md runs it:
//   enter:    props → (write permit) → acquire, awaited like a provider call → lease validation →
//             enterScope. The span opens once the lease is accepted.
//   complete: release (memoised) → scopeDone: the span closes after the release.
//   cleanup:  on failure unwinding, release (unless `complete` already tried) and aggregate
//             a release failure with the error being unwound.

import { endResourceScope } from "../errors/cleanup-failure.js"
import { masked } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { resolvePortablePath } from "./portable-path.js"
import { captureSandboxProvider } from "../core/provider-shape.js"
import { acceptLease } from "./lease.js"
import { acquireWritePermit } from "./write-permit.js"

const OUTER_ATTRIBUTES = JSON.stringify({ nested: false })
const NESTED_ATTRIBUTES = JSON.stringify({ nested: true })
const NO_PERMIT = () => {}
const CANCELLED_CLEANUP = "AML evaluation was cancelled and Sandbox cleanup failed"

function readAccess(value, fallback) {
  if (value === undefined) return fallback
  if (value !== "read-only" && value !== "read-write") {
    throw propTypeError('<Sandbox> access must be "read-only" or "read-write"', value)
  }
  return value
}

/**
 * Enters the <Sandbox> node on top of `task`. A nested Sandbox returns a step code
 * synchronously; an outer one returns a promise of it (acquisition is asynchronous).
 */
export function enterSandbox(domain, task, props, slot) {
  const parent = slot.env.sandbox
  return parent === undefined ? enterOuter(domain, task, props, slot) : enterNested(domain, task, props, slot, parent)
}

function enterNested(domain, task, props, slot, parent) {
  if (props.provider !== undefined) {
    throw new EvaluationError("A nested <Sandbox> cannot select a provider; it inherits the parent lease")
  }
  const access = readAccess(props.access, parent.access)
  if (parent.access === "read-only" && access === "read-write") {
    throw new EvaluationError("A nested <Sandbox> cannot widen read-only access to read-write")
  }
  const rootProp = props.root
  const cwdProp = props.cwd
  const root = rootProp === undefined ? parent.root : resolvePortablePath("<Sandbox> root", rootProp, parent.root)
  let cwd
  if (cwdProp !== undefined) cwd = resolvePortablePath("<Sandbox> cwd", cwdProp, root)
  else cwd = rootProp === undefined ? parent.cwd : root
  // The same lease reference: a view narrows what descendants are told, while the runtime
  // keeps the outer root and access (which is what supportsSandboxRuntime compares).
  const session = Object.freeze({ access, cwd, lease: parent.lease, nested: true, provider: parent.provider, root })
  slot.env = slot.env.withSandbox(session)
  const native = domain.native
  slot.complete = () => native.scopeDone(task, "", undefined, undefined)
  return native.enterScope(task, "sandbox", "Sandbox", true, false, NESTED_ATTRIBUTES, undefined)
}

/** The outer Sandbox's root and cwd (SB-1): cwd falls back to root, the Workspace cwd, ".". */
function outerPaths(props, workspace) {
  const rootProp = props.root
  const cwdProp = props.cwd
  const root = rootProp === undefined ? "." : resolvePortablePath("<Sandbox> root", rootProp, ".")
  if (cwdProp !== undefined) return { cwd: resolvePortablePath("<Sandbox> cwd", cwdProp, root), root }
  if (rootProp !== undefined) return { cwd: root, root }
  return { cwd: workspace?.cwd ?? ".", root }
}

function callAcquire(provider, request) {
  return provider.acquire.call(provider.target, request)
}

async function acquire(provider, request) {
  return callAcquire(provider, request)
}

function callRelease(lease) {
  return lease.release.call(lease.target)
}

async function release(lease) {
  await callRelease(lease)
}

/**
 * A lease that arrives after cancellation already failed the evaluation: nobody will use
 * it, so it is released at once. Its failures have nowhere to go and are dropped.
 */
function reclaimLate(pending, name) {
  pending.then(
    (lease) => masked(acceptLease, name, lease).then((accepted) => masked(release, accepted)).catch(() => {}),
    () => {},
  )
}

async function enterOuter(domain, task, props, slot) {
  const providerProp = props.provider
  // Provider code (getters, acquire, release) never sees the component evaluation scope.
  const provider = providerProp === undefined ? domain.options.sandboxProvider : masked(captureSandboxProvider, providerProp)
  if (provider === undefined) throw new EvaluationError("<Sandbox> requires a provider or AmlRuntime sandboxProvider")
  const access = readAccess(props.access, "read-only")
  const workspace = slot.env.workspace
  const { cwd, root } = outerPaths(props, workspace)
  const name = provider.name
  const signal = domain.signal
  const race = (promise) => domain.race(promise)
  const permit =
    access === "read-write" && workspace?.writeConcurrency === "serial"
      ? await acquireWritePermit(workspace, race)
      : NO_PERMIT
  const request = { access, cwd, evaluationId: domain.runId, root, signal }
  if (workspace !== undefined) request.workspace = workspace
  Object.freeze(request)

  let lease
  try {
    const pending = masked(acquire, provider, request)
    try {
      // Like a provider call (and Workspace acquisition): an abort does not abandon the
      // acquisition at once, so a lease the provider still delivers is released before the
      // evaluation rejects (bounded by the provider grace), and a cooperative provider's own
      // cleanup (a container created mid-abort) finishes before it settles.
      lease = await domain.awaitProvider(pending)
    } catch (error) {
      if (signal.aborted) {
        // The provider may still hand over a lease it did not stop acquiring.
        reclaimLate(pending, name)
        throw signal.reason
      }
      throw new EvaluationError(`Sandbox provider "${name}" failed to acquire`, { cause: error })
    }
    lease = await masked(acceptLease, name, lease)
  } catch (error) {
    permit()
    throw error
  }

  let releasing
  const releaseOnce = () => {
    releasing ??= masked(release, lease)
      .catch((cause) => {
        throw new EvaluationError(`Sandbox provider "${name}" failed to release lease "${lease.id}"`, { cause })
      })
      .finally(permit)
    return releasing
  }
  // The provider ignored cancellation but returned a lease: give it back, then stop.
  if (signal.aborted) {
    const reason = signal.reason
    try {
      await releaseOnce()
    } catch (releaseError) {
      throw new AggregateError([reason, releaseError], CANCELLED_CLEANUP)
    }
    throw reason
  }

  const session = Object.freeze({
    access,
    cwd,
    lease: Object.freeze({ handle: lease.handle, id: lease.id, runtime: lease.runtime }),
    nested: false,
    provider: Object.freeze({ name }),
    root,
  })
  slot.env = slot.env.withSandbox(session)
  // Release on either outcome; an abort during the release still decides it (§2.11).
  endResourceScope(slot, domain, task, releaseOnce, () => releasing !== undefined, CANCELLED_CLEANUP)
  const native = domain.native
  // Installed before the span opens, so a lease is released even if entering fails.
  return native.enterScope(task, "sandbox", "Sandbox", true, false, OUTER_ATTRIBUTES, undefined)
}
