// Realm-wide registries shared by every physical copy of the SDK loaded in one JS realm
// (INVENTORY RT-4). Each lives on globalThis under a Symbol.for key as a non-enumerable,
// non-configurable property, so nodes, tools and component scopes made by one copy are
// understood by another.

/**
 * Returns the realm value under `Symbol.for(key)`, creating it with `create()` when absent.
 * An existing value that fails `isValid` is rejected with `message` as a TypeError.
 */
export function realmSingleton(key, create, isValid, message) {
  const symbol = Symbol.for(key)
  if (Object.prototype.hasOwnProperty.call(globalThis, symbol)) {
    const existing = globalThis[symbol]
    if (!isValid(existing)) throw new TypeError(message)
    return existing
  }
  const value = create()
  Object.defineProperty(globalThis, symbol, {
    configurable: false,
    enumerable: false,
    value,
    writable: false,
  })
  return value
}
