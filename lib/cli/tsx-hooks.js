// Node module hooks (`module.register`) that let `aml run` load TypeScript and TSX without
// a bundler. They run on Node's loader thread, so this file keeps no state the main thread
// needs. Transform: oxc-transform (see docs/ARCHITECTURE.md "aml run" for the choice).
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

// `.cts` is not here: a CommonJS TypeScript module would need the CommonJS loader too.
const TRANSFORMED = /\.(?:m?ts|tsx|jsx)$/
const NOT_FOUND = new Set(["ERR_MODULE_NOT_FOUND", "ERR_UNSUPPORTED_DIR_IMPORT"])
// The TypeScript convention (`./x.js` naming `./x.ts`) and extensionless imports.
const ALTERNATIVES = {
  ".js": [".ts", ".tsx"],
  ".jsx": [".tsx"],
  ".mjs": [".mts"],
  "": [".ts", ".tsx", ".js", ".jsx", "/index.ts", "/index.tsx", "/index.js"],
}
const SDK = /^@aml-jsx\/sdk(?:\/|$)/

let sdkParentUrl
let transformSync

/** `data.sdkParentUrl`: a file URL inside this package, used to resolve the SDK fallback. */
export function initialize(data) {
  sdkParentUrl = data?.sdkParentUrl
}

function isPathLike(specifier) {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/") || specifier.startsWith("file:")
}

function extensionOf(specifier) {
  const base = specifier.slice(specifier.lastIndexOf("/") + 1)
  const dot = base.lastIndexOf(".")
  return dot <= 0 ? "" : base.slice(dot)
}

function typed(result) {
  const path = result.url.startsWith("file:") ? new URL(result.url).pathname : ""
  return TRANSFORMED.test(path) ? { ...result, format: "module" } : result
}

export async function resolve(specifier, context, nextResolve) {
  try {
    return typed(await nextResolve(specifier, context))
  } catch (error) {
    if (!NOT_FOUND.has(error?.code)) throw error
    if (isPathLike(specifier)) {
      // An unknown "extension" is part of the name (`./name.util` for `./name.util.ts`).
      const known = Object.hasOwn(ALTERNATIVES, extensionOf(specifier)) ? extensionOf(specifier) : ""
      const stem = known === "" ? specifier.replace(/\/$/, "") : specifier.slice(0, -known.length)
      for (const suffix of ALTERNATIVES[known]) {
        try {
          return typed(await nextResolve(stem + suffix, context))
        } catch (candidateError) {
          if (!NOT_FOUND.has(candidateError?.code)) throw candidateError
        }
      }
    } else if (SDK.test(specifier) && sdkParentUrl !== undefined) {
      // A workflow outside any project that installs the SDK (a scratch file in /tmp) gets
      // the copy that runs the CLI, so `aml run` works wherever the file is.
      return typed(await nextResolve(specifier, { ...context, parentURL: sdkParentUrl }))
    }
    throw error
  }
}

function compile(path, source) {
  // Loaded on first use: a plain `.js` workflow never pays for the transformer.
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
    throw new SyntaxError(`${location}: ${first.message}${help}${more}`)
  }
  const map = Buffer.from(JSON.stringify(result.map)).toString("base64")
  return `${result.code}\n//# sourceMappingURL=data:application/json;base64,${map}\n`
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:")) return nextLoad(url, context)
  const parsed = new URL(url)
  if (!TRANSFORMED.test(parsed.pathname)) return nextLoad(url, context)
  const path = fileURLToPath(parsed)
  const source = await readFile(path, "utf8")
  return { format: "module", shortCircuit: true, source: compile(path, source) }
}
