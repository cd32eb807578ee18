// Node module hooks (`module.register`) that let `aml run` load TypeScript and TSX without
// a bundler, when the in-process loader (inline-loader.js) cannot take the workflow. They
// run on Node's loader thread, so this file keeps no state the main thread needs.
// Transform: oxc-transform (see docs/ARCHITECTURE.md "aml run" for the choice).
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"

import { TRANSFORMED, alternativesOf, compile, isPathLike, loadTransform } from "./ts-compile.js"

const NOT_FOUND = new Set(["ERR_MODULE_NOT_FOUND", "ERR_UNSUPPORTED_DIR_IMPORT"])
const SDK = /^@aml-jsx\/sdk(?:\/|$)/
// `import("aml-resolve:<parent URL>#<specifier>")` (module-context.js): resolve `specifier`
// from an authored file that the in-process loader compiled.
const FROM_PARENT = "aml-resolve:"

let sdkParentUrl

/** `data.sdkParentUrl`: a file URL inside this package, used to resolve the SDK fallback. */
export function initialize(data) {
  sdkParentUrl = data?.sdkParentUrl
}

function typed(result) {
  const path = result.url.startsWith("file:") ? new URL(result.url).pathname : ""
  return TRANSFORMED.test(path) ? { ...result, format: "module" } : result
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith(FROM_PARENT)) {
    const hash = specifier.indexOf("#")
    const parentURL = decodeURIComponent(specifier.slice(FROM_PARENT.length, hash))
    return resolve(decodeURIComponent(specifier.slice(hash + 1)), { ...context, parentURL }, nextResolve)
  }
  try {
    return typed(await nextResolve(specifier, context))
  } catch (error) {
    if (!NOT_FOUND.has(error?.code)) throw error
    if (isPathLike(specifier)) {
      for (const candidate of alternativesOf(specifier)) {
        try {
          return typed(await nextResolve(candidate, context))
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

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:")) return nextLoad(url, context)
  const parsed = new URL(url)
  if (!TRANSFORMED.test(parsed.pathname)) return nextLoad(url, context)
  const path = fileURLToPath(parsed)
  const source = await readFile(path, "utf8")
  await loadTransform()
  return { format: "module", shortCircuit: true, source: compile(path, source) }
}
