// What `aml run` compiles and how: the TypeScript/JSX file rules and the oxc transform, shared
// by the in-process loader (inline-loader.js) and the module hooks (tsx-hooks.js, which run
// on Node's loader thread, so nothing here keeps state the main thread needs).
import { createRequire } from "node:module"
import { codeFrame } from "./code-frame.js"

// `.cts` is not here: a CommonJS TypeScript module would need the CommonJS loader too.
export const TRANSFORMED = /\.(?:m?ts|tsx|jsx)$/
// The TypeScript convention (`./x.js` naming `./x.ts`) and extensionless imports, tried only
// after the name as written was not found.
export const ALTERNATIVES = {
  ".js": [".ts", ".tsx"],
  ".jsx": [".tsx"],
  ".mjs": [".mts"],
  "": [".ts", ".tsx", ".js", ".jsx", "/index.ts", "/index.tsx", "/index.js"],
}

export function isPathLike(specifier) {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/") || specifier.startsWith("file:")
}

export function extensionOf(specifier) {
  const base = specifier.slice(specifier.lastIndexOf("/") + 1)
  const dot = base.lastIndexOf(".")
  return dot <= 0 ? "" : base.slice(dot)
}

/** The specifiers to try, in order, for a path-like `specifier` that was not found. */
export function alternativesOf(specifier) {
  // An unknown "extension" is part of the name (`./name.util` for `./name.util.ts`).
  const known = Object.hasOwn(ALTERNATIVES, extensionOf(specifier)) ? extensionOf(specifier) : ""
  const stem = known === "" ? specifier.replace(/\/$/, "") : specifier.slice(0, -known.length)
  return ALTERNATIVES[known].map((suffix) => stem + suffix)
}

let transformSync

/**
 * Loads the transformer with `import()`, for the module hooks: oxc-transform is an ES module,
 * and on Node's loader thread `require` of an ES module goes through the hooks' synchronous
 * resolve, which Node 22 does not implement there ("The resolveSync() method is not
 * implemented"), so `compile` must not `require` it on that thread.
 */
export async function loadTransform() {
  transformSync ??= (await import("oxc-transform")).transformSync
}

/** The oxc transform of `source` (ES module JS with an inline source map), or a SyntaxError. */
export function compile(path, source) {
  // Loaded on first use: a plain `.js` workflow never pays for the transformer. The main
  // thread may `require` it (no hooks are registered yet when the in-process loader runs).
  transformSync ??= createRequire(import.meta.url)("oxc-transform").transformSync
  const result = transformSync(path, source, {
    sourcemap: true,
    jsx: { runtime: "automatic", importSource: "@aml-jsx/sdk" },
  })
  if (result.errors.length > 0) {
    const [first] = result.errors
    const where = /\[(.*):(\d+):(\d+)\]/.exec(first.codeframe ?? "")
    const location = where === null ? path : `${where[1]}:${where[2]}:${where[3]}`
    const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : ""
    const help = first.helpMessage ? `; ${first.helpMessage}` : ""
    const error = new SyntaxError(`${location}: ${first.message}${help}${more}`)
    // The offending line with a caret, shown under the message (lib/cli/diagnostics.js).
    if (where !== null) error.codeFrame = codeFrame(source, Number(where[2]), Number(where[3]))
    throw error
  }
  const map = Buffer.from(JSON.stringify(result.map)).toString("base64")
  return `${result.code}\n//# sourceMappingURL=data:application/json;base64,${map}\n`
}
