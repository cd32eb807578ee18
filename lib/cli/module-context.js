// `import.meta` and `import()` of one authored file compiled by inline-loader.js. Each
// compiled file imports this module with `?of=<authored file URL>`, so it gets an instance
// of its own whose `meta` describes the authored file, not the cached copy.
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"

import { UnsupportedResolution, dynamicTarget, resolveFrom } from "./inline-loader.js"
import { registerHooks } from "./load-workflow.js"

const of = new URL(import.meta.url).searchParams.get("of")
const filename = fileURLToPath(of)

/** Stands in for `import.meta` (Node's own members: url, filename, dirname, resolve). */
export const meta = {
  dirname: dirname(filename),
  filename,
  resolve: (specifier) => resolveFrom(String(specifier), of),
  url: of,
}

/** Stands in for `import(specifier, options)`. */
export async function load(specifier, options) {
  const text = String(specifier)
  let url
  try {
    url = await dynamicTarget(text, of)
  } catch (error) {
    if (!(error instanceof UnsupportedResolution)) throw error
    // Node's resolver decides (and words any error), from the authored file.
    registerHooks()
    url = `aml-resolve:${encodeURIComponent(of)}#${encodeURIComponent(text)}`
  }
  return options === undefined ? import(url) : import(url, options)
}
