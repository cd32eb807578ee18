// AML nodes: immutable JSX descriptors. Building a node never calls its component.
// The brand is a non-enumerable own `$$typeof` holding a Symbol.for key, so nodes from
// another physical SDK copy are recognised and plain `{ type, props }` objects are not.

export const NODE_BRAND = Symbol.for("@aml-jsx/sdk/node")
export const PRIMITIVE_KIND = Symbol.for("@aml-jsx/sdk/primitive-kind")

const brand = { configurable: false, enumerable: false, value: NODE_BRAND, writable: false }

// Node identities for the engine's cycle check (lib/core/domain.js): even numbers, assigned at
// creation, so entering a node costs no WeakMap insertion. Numbers stay exact to 2^53.
let lastIdentity = 0

class AmlNode {
  #identity

  constructor(type, props) {
    this.type = type
    this.props = props
    Object.defineProperty(this, "$$typeof", brand)
    this.#identity = lastIdentity += 2
    Object.freeze(this)
  }

  /** The identity of a node this copy created, or 0 (another copy's node, a hand-built one). */
  static identityOf(value) {
    return #identity in value ? value.#identity : 0
  }

  static is(value) {
    return (
      value !== null &&
      (typeof value === "object" || typeof value === "function") &&
      value.$$typeof === NODE_BRAND
    )
  }
}

export const nodeIdentity = AmlNode.identityOf

// %Object.prototype%, the prototype a plain `{}` gets.
const OBJECT_PROTOTYPE = Object.getPrototypeOf({})

/** Creates a frozen node from `type` and a shallow, frozen copy of `props`. */
export function createNode(type, props) {
  // The same copy as `{ ...props }` (every own enumerable property defined as data, getters
  // read once, an own "__proto__" kept as data), but not built by V8's clone fast path: a
  // clone's map cannot hold the frozen transition, so freezing it made a new map for every
  // node, and every later props read missed its inline cache.
  const copy = props == null ? {} : { __proto__: OBJECT_PROTOTYPE, ...props }
  return new AmlNode(type, Object.freeze(copy))
}
