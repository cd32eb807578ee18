export { Fragment } from "../lib/core/fragment.js"
export { jsxDEV } from "../lib/core/jsx.js"
