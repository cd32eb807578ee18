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
