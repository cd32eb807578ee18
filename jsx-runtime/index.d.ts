// Types of the automatic JSX runtime (`"jsx": "react-jsx"`, `"jsxImportSource": "@aml-jsx/sdk"`).

import type { AmlNode, AmlRenderable } from "../index.js"

export { Fragment } from "../index.js"

/** A function component: receives its props and returns something renderable. */
type AmlComponent<Props> = (props: Props) => AmlRenderable

/**
 * Builds a frozen node from a component and its props (shallow-copied and frozen). The
 * component is not called. `key` is accepted and ignored: AML has no reconciliation.
 */
export declare function jsx<Props>(type: AmlComponent<Props>, props: Props, key?: string | number | bigint | null): AmlNode

/** Same function as {@link jsx}; emitted for elements with several static children. */
export declare function jsxs<Props>(
  type: AmlComponent<Props>,
  props: Props,
  key?: string | number | bigint | null,
): AmlNode

/** How TypeScript checks AML JSX. Only components exist: there are no intrinsic elements. */
export declare namespace JSX {
  /** Every JSX expression produces an {@link AmlNode}. */
  type Element = AmlNode
  /** Any function component may be used as a tag, sync or async. */
  type ElementType = AmlComponent<any>
  /** JSX children are passed in the `children` prop. */
  interface ElementChildrenAttribute {
    children: unknown
  }
  /** Empty: lower-case tags such as `<div />` are type errors. */
  interface IntrinsicElements {}
}

export {}
