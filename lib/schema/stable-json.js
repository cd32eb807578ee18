// Stable JSON snapshots (INVENTORY TL-3, SO-1): values that cross a model boundary (Tool
// input and output, structured output, generated JSON Schemas) are copied once into deeply
// frozen plain data. Later mutation of the original cannot change what AML validated, and
// the copy is exactly what `JSON.stringify` would transport, minus its silent coercions.
//
// The walk uses an explicit stack, so a 100,000-deep value cannot overflow the JS stack.
// Keys are sorted; `__proto__` is kept as an ordinary data property.

const objectPrototype = Object.prototype
const arrayPrototype = Array.prototype
const isArray = Array.isArray
const freeze = Object.freeze
const defineProperty = Object.defineProperty

/** Why a value is not JSON; the message is used as the `cause` of the caller's error. */
function notJson(label, what) {
  return new TypeError(`${label} contains ${what}`)
}

function isPlainObject(value) {
  const prototype = Object.getPrototypeOf(value)
  return prototype === objectPrototype || prototype === null
}

function setKey(target, key, value) {
  // Assigning `__proto__` would replace the prototype instead of storing data.
  if (key === "__proto__") {
    defineProperty(target, key, { configurable: true, enumerable: true, value, writable: true })
  } else {
    target[key] = value
  }
}

/**
 * Checks a leaf and returns its snapshot, or `undefined` when `value` is a container the
 * caller must walk. Throws the documented cause for anything that is not JSON.
 */
function leaf(value, label) {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value
    case "number":
      if (!Number.isFinite(value)) throw notJson(label, "a non-finite number")
      // JSON has no negative zero; keep what the transport would deliver.
      return value === 0 ? 0 : value
    case "object":
      return value === null ? null : undefined
    default:
      // undefined, bigint, function, symbol
      throw notJson(label, `unsupported ${typeof value} data`)
  }
}

/**
 * One container being copied: its source, its copy, the keys still to visit and where the
 * copy goes in its parent once complete.
 */
class Open {
  constructor(source, copy, keys, parent, key) {
    this.source = source
    this.copy = copy
    this.keys = keys
    this.index = 0
    this.parent = parent
    this.key = key
  }
}

/** Opens a container; `active` is null for the root, which has no ancestors. */
function open(value, label, parent, key, active) {
  if (active !== null && active.has(value)) throw notJson(label, "a cycle")
  if (isArray(value)) {
    if (Object.getPrototypeOf(value) !== arrayPrototype) throw notJson(label, "a non-plain object")
    const length = value.length
    for (let i = 0; i < length; i++) if (!(i in value)) throw notJson(label, "a sparse array")
    if (active !== null) active.add(value)
    return new Open(value, new Array(length), null, parent, key)
  }
  if (!isPlainObject(value)) throw notJson(label, "a non-plain object")
  if (Object.getOwnPropertySymbols(value).length > 0) throw notJson(label, "symbol keys")
  if (active !== null) active.add(value)
  return new Open(value, {}, sortedKeys(value), parent, key)
}

/** Own enumerable string keys in sort order; already-sorted keys (the usual case) skip the sort. */
function sortedKeys(value) {
  const keys = Object.keys(value)
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) return keys.sort()
  }
  return keys
}

/**
 * Returns a deeply frozen, key-sorted plain-data copy of `value`, or throws a TypeError
 * `${label} contains …` describing the first part that is not JSON.
 */
export function snapshotJson(value, label) {
  const scalar = leaf(value, label)
  if (scalar !== undefined || value === null) return scalar
  if (isArray(value)) return snapshotContainer(value, label)
  // A root object's scalar members are copied without the walk's frame, stack and ancestor
  // set (the common Tool input and output is one flat object); the first container hands
  // over to the walk. The checks are open()'s, in its order.
  if (!isPlainObject(value)) throw notJson(label, "a non-plain object")
  if (Object.getOwnPropertySymbols(value).length > 0) throw notJson(label, "symbol keys")
  const keys = sortedKeys(value)
  const copy = {}
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]
    const child = value[key]
    const childScalar = leaf(child, label)
    if (childScalar !== undefined || child === null) {
      setKey(copy, key, childScalar)
      continue
    }
    const root = new Open(value, copy, keys, null, null)
    root.index = index + 1
    // Ancestors on the path being copied: a shared (acyclic) reference is fine, a loop is not.
    const active = new Set([value])
    return walk([root, open(child, label, root, key, active)], active, label, root)
  }
  return freeze(copy)
}

/** A root array: its scalar elements are copied in place; the first container hands over. */
function snapshotContainer(value, label) {
  const root = open(value, label, null, null, null)
  const source = root.source
  const length = source.length
  while (root.index < length) {
    const key = root.index
    root.index++
    const child = source[key]
    const childScalar = leaf(child, label)
    if (childScalar !== undefined || child === null) {
      setKey(root.copy, key, childScalar)
      continue
    }
    const active = new Set([source])
    return walk([root, open(child, label, root, key, active)], active, label, root)
  }
  return freeze(root.copy)
}

function walk(stack, active, label, root) {
  while (stack.length > 0) {
    const top = stack[stack.length - 1]
    const source = top.source
    const keys = top.keys
    const length = keys === null ? source.length : keys.length
    if (top.index === length) {
      stack.pop()
      active.delete(source)
      freeze(top.copy)
      if (top.parent !== null) setKey(top.parent.copy, top.key, top.copy)
      continue
    }
    const key = keys === null ? top.index : keys[top.index]
    top.index++
    const child = source[key]
    const childScalar = leaf(child, label)
    if (childScalar !== undefined || child === null) {
      setKey(top.copy, key, childScalar)
    } else {
      stack.push(open(child, label, top, key, active))
    }
  }
  return root.copy
}

/** `JSON.stringify` of a snapshot, or `undefined` when it cannot be serialised (too deep). */
export function jsonText(snapshot) {
  try {
    return JSON.stringify(snapshot)
  } catch {
    return undefined
  }
}
