export { Fragment } from "../lib/fragment.js"
export { jsx, jsxs } from "../lib/jsx.js"
