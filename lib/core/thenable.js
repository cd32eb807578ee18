// Thenables are read exactly once (`then` is read by the classifier) and called in a later
// microtask, which is what a native `await` does. Native promises with the intrinsic `then`
// take the fast path: awaiting them directly is indistinguishable.

const nativeThen = Promise.prototype.then

export function settle(value, then) {
  if (then === nativeThen && value instanceof Promise) return value
  return new Promise((resolve, reject) => {
    queueMicrotask(() => {
      try {
        then.call(value, resolve, reject)
      } catch (error) {
        reject(error)
      }
    })
  })
}

/**
 * Calls a listener and adopts what it returns as `Promise.resolve` would: a returned
 * thenable's `then` is read once and called once (in a microtask). Run it masked, and both
 * happen masked, so neither can reach component-local evaluate(). Returns undefined for a
 * non-object result. A listener sees exactly the arguments its event has (an event listener
 * is called with one, an error handler with two): callers can observe the count.
 */
export function callAdopting(listener, first, second) {
  const result = arguments.length > 2 ? listener(first, second) : listener(first)
  if (result === null || (typeof result !== "object" && typeof result !== "function")) return undefined
  return Promise.resolve(result)
}
