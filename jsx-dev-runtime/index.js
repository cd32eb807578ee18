export { Fragment } from "../lib/fragment.js"
export { jsxDEV } from "../lib/jsx.js"
