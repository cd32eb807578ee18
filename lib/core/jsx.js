// The automatic JSX runtime functions. `key` and dev-only source metadata are ignored:
// AML has no reconciliation, so keys carry no meaning.
import { createNode } from "./node.js"

export function jsx(type, props, _key) {
  return createNode(type, props)
}

export const jsxs = jsx

export function jsxDEV(type, props, _key, _isStaticChildren, _source, _self) {
  return createNode(type, props)
}
