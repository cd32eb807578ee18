// Shapes of values handed to AML by users and providers, judged one way everywhere.

/** A plain options record: an object that is not null and not an array. */
export function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

/** Anything with properties a provider could hand back (functions and proxies included). */
export function isObjectLike(value) {
  return (typeof value === "object" || typeof value === "function") && value !== null
}

/**
 * `value`'s `keys`, each read once and in order, as a record: a provider's getter runs once,
 * so what AML checks is what it uses. A throwing read (a getter, a revoked proxy) is
 * `TypeError(unreadable)` with the cause. Every provider lease, runtime, result and process.
 */
export function readFields(value, keys, unreadable) {
  const fields = {}
  try {
    for (const key of keys) fields[key] = value[key]
  } catch (cause) {
    throw new TypeError(unreadable, { cause })
  }
  return fields
}

/**
 * `lease[key]`, read once, as a function: `<label> returned a lease with an unreadable <key>
 * method` when the read throws (a getter, a revoked proxy), `<label> returned a lease without
 * <key>()` when it is not a function. Shared by the Sandbox and Workspace lease checks.
 */
export function readLeaseMethod(label, lease, key) {
  let fn
  try {
    fn = lease[key]
  } catch (cause) {
    throw new TypeError(`${label} returned a lease with an unreadable ${key} method`, { cause })
  }
  if (typeof fn !== "function") throw new TypeError(`${label} returned a lease without ${key}()`)
  return fn
}
