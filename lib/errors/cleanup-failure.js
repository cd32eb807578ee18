// How a failure and the resource cleanups it triggers are reported (INVENTORY §2.11): one
// flat AggregateError per unwinding frame stack. When a Sandbox release fails while a
// descendant's error unwinds, and then the enclosing Workspace's completion fails too, the
// user gets [original, Sandbox release failure, Workspace completion failure] — not an
// aggregate nested in an aggregate. Only aggregates made here are flattened: a user's own
// AggregateError is an ordinary failure and stays whole.

export const CLEANUP_FAILED = "AML evaluation and resource cleanup both failed"

const ours = new WeakSet()

/** Whether `error` is the run's cancellation, directly or as the head of our aggregate. */
export function isCancellation(signal, error) {
  if (!signal.aborted) return false
  const reason = signal.reason
  return error === reason || (ours.has(error) && error.errors[0] === reason)
}

/**
 * `error` (what was unwinding) with `cleanupError` appended. `cancelledMessage` names the
 * resource for the cancelled case; a plain failure always gets CLEANUP_FAILED.
 */
export function withCleanupFailure(signal, error, cleanupError, cancelledMessage) {
  const message = cancelledMessage !== undefined && isCancellation(signal, error) ? cancelledMessage : CLEANUP_FAILED
  const errors = ours.has(error) ? [...error.errors, cleanupError] : [error, cleanupError]
  const aggregate = new AggregateError(errors, message)
  ours.add(aggregate)
  return aggregate
}

/**
 * How a scope that holds a resource (a Sandbox or Workspace lease) ends, the driver's
 * complete/cleanup protocol: `slot.complete` runs `finish("success")`, and an abort that lands
 * meanwhile still decides the outcome (the reason, aggregated with a finishing failure);
 * `slot.cleanup` (a failure unwinding) runs `finish("failure")` unless `started()` says
 * `complete` already ran it (then its own failure is what unwinds), and rejects with the
 * unwinding error, a finishing failure appended.
 */
export function endResourceScope(slot, domain, task, finish, started, cancelledMessage) {
  const signal = domain.signal
  slot.complete = async () => {
    try {
      await finish("success")
    } catch (finishError) {
      if (signal.aborted) throw new AggregateError([signal.reason, finishError], cancelledMessage)
      throw finishError
    }
    if (signal.aborted) throw signal.reason
    return domain.native.scopeDone(task, "", undefined, undefined)
  }
  slot.cleanup = async (error) => {
    if (started()) throw error
    try {
      await finish("failure")
    } catch (finishError) {
      throw withCleanupFailure(signal, error, finishError, cancelledMessage)
    }
    throw error
  }
}
