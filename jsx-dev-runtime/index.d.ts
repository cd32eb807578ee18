// Types of the development JSX runtime (`"jsx": "react-jsxdev"`). Same contract as
// `@aml-jsx/sdk/jsx-runtime`; source metadata is ignored.

import type { AmlNode, AmlRenderable } from "../index.js"
import type { JSX as RuntimeJSX } from "../jsx-runtime/index.js"

export { Fragment } from "../index.js"

/**
 * Development form of `jsx`: builds the same frozen node and ignores `key`,
 * `isStaticChildren`, `source` and `self`.
 */
export declare function jsxDEV<Props>(
  type: (props: Props) => AmlRenderable,
  props: Props,
  key?: string | number | bigint | null,
  isStaticChildren?: boolean,
  source?: unknown,
  self?: unknown,
): AmlNode

/** How TypeScript checks AML JSX; identical to the production runtime's namespace. */
export declare namespace JSX {
  /** Every JSX expression produces an {@link AmlNode}. */
  type Element = RuntimeJSX.Element
  /** Any function component may be used as a tag, sync or async. */
  type ElementType = RuntimeJSX.ElementType
  /** JSX children are passed in the `children` prop. */
  interface ElementChildrenAttribute extends RuntimeJSX.ElementChildrenAttribute {}
  /** Empty: lower-case tags such as `<div />` are type errors. */
  interface IntrinsicElements extends RuntimeJSX.IntrinsicElements {}
}

export {}
