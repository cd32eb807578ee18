// Serial Workspace writers (INVENTORY SB-1 "Write permit"): a read-write outer <Sandbox> in a
// Workspace whose materialization has writeConcurrency "serial" waits for a FIFO permit of
// that materialization and gives it back after its lease is released. Keyed by the
// materialization reference object the Workspace scope puts in the lexical environment, so
// the queue lives exactly as long as the materialization.

const QUEUES = new WeakMap()

/**
 * Resolves with a release function once `workspace` grants the permit. `race` settles like
 * its promise argument or rejects when the evaluation aborts (EvaluationDomain.race); an
 * abandoned waiter leaves the queue, and a permit granted after the abort is passed on.
 */
export async function acquireWritePermit(workspace, race) {
  let queue = QUEUES.get(workspace)
  if (queue === undefined) {
    queue = { held: false, waiters: [] }
    QUEUES.set(workspace, queue)
  }
  let abandoned = false
  const release = () => {
    const next = queue.waiters.shift()
    if (next === undefined) queue.held = false
    else next()
  }
  if (!queue.held) {
    queue.held = true
    return once(release)
  }
  const granted = new Promise((resolve) => {
    queue.waiters.push(() => {
      // The waiter stopped waiting (abort): hand the permit straight on.
      if (abandoned) release()
      else resolve()
    })
  })
  try {
    await race(granted)
  } catch (error) {
    abandoned = true
    throw error
  }
  return once(release)
}

function once(fn) {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}
