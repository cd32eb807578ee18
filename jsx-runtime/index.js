export { Fragment } from "../lib/core/fragment.js"
export { jsx, jsxs } from "../lib/core/jsx.js"
