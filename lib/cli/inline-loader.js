// The in-process TS/TSX loader of `aml run` (the common path; docs/CLI.md "Cold start").
// On Node 20, `module.register` boots a loader thread synchronously and routes every later
// import through it, which costs more than everything else the CLI adds to `node -e 0`.
// So the main thread compiles the workflow and every TypeScript file it reaches through
// static relative imports with oxc, rewrites each import specifier to an absolute URL
// (authored TS files → their compiled copies, packages → the file Node's resolver would
// pick, see package-resolve.js) and imports the compiled entry from a content-keyed cache
// directory. `import.meta` and `import()` in compiled files are rebound to the authored file
// (module-context.js), so `import.meta.url` and relative dynamic imports behave as if the
// authored file were loaded; inline source maps keep stack traces on the authored lines.
//
// Whatever this path cannot decide exactly as Node would — a relative import of a plain JS
// file (which might import TS), `#imports`, a specifier that does not resolve, an unusual
// `exports` — throws `UnsupportedResolution` before any workflow code ran, and the caller
// loads the workflow through the module hooks instead (tsx-hooks.js), as before.
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { init, parse } from "es-module-lexer"

import { UnsupportedResolution, resolveBare } from "./package-resolve.js"
import { TRANSFORMED, alternativesOf, compile, isPathLike } from "./ts-compile.js"

// Bumped whenever the compiled form changes, so old cache entries are never read; the pinned
// oxc-transform version is part of every key too.
const FORMAT = `aml-run-1 oxc-transform@${JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).dependencies?.["oxc-transform"]}`
const SDK = /^@aml-jsx\/sdk(?:\/|$)/
const CONTEXT_URL = new URL("./module-context.js", import.meta.url).href
const SDK_PARENT = fileURLToPath(new URL("../../index.js", import.meta.url))
// Same-length stand-ins, so columns (and the source map) stay right on those lines.
const META = "_aml$meta__" // import.meta
const DYNAMIC = "_aml$i" // import

let cacheDir
/** compiled authored path → cache file URL, for this process. */
const compiled = new Map()
/** SDK entry URL → the bundled module to import instead (sdk-bundle.js), when current. */
let sdkMap = new Map()

function cacheDirectory() {
  if (cacheDir === undefined) {
    const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache")
    cacheDir = join(base, "aml-jsx-sdk", "run")
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
    } catch (error) {
      throw new UnsupportedResolution(`cache directory ${cacheDir}: ${error?.message}`)
    }
  }
  return cacheDir
}

/** Writes `content` to `path` unless it already holds exactly that (atomic for readers). */
function writeIfChanged(path, content) {
  try {
    if (readFileSync(path, "utf8") === content) return
  } catch {}
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, content)
  renameSync(temporary, path)
}

function isFile(path) {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The authored file a path-like `specifier` in `parentPath` names, with the TS fallbacks. */
function resolveRelative(specifier, parentPath) {
  const parentUrl = pathToFileURL(parentPath)
  for (const candidate of [specifier, ...alternativesOf(specifier)]) {
    let url
    try {
      url = new URL(candidate, parentUrl)
    } catch {
      break
    }
    if (url.protocol !== "file:" || url.search !== "" || url.hash !== "") break
    const path = fileURLToPath(url)
    // Node identifies a module by its real path: two symlinked names are one module.
    if (isFile(path)) return realpathSync(path)
  }
  throw new UnsupportedResolution(`${specifier} not found from ${parentPath}`)
}

/** The absolute URL `specifier` (in the authored file `parentPath`) is rewritten to. */
function rewriteTarget(specifier, parentPath) {
  if (isPathLike(specifier)) {
    const path = resolveRelative(specifier, parentPath)
    if (TRANSFORMED.test(path)) return compileFile(path)
    if (path.endsWith(".json")) return pathToFileURL(path).href
    // A plain JS module loads natively and might import TypeScript: only the hooks can say.
    throw new UnsupportedResolution(`JavaScript import ${path}`)
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) && !specifier.startsWith("node:")) return specifier
  let url
  try {
    url = resolveBare(specifier, parentPath)
  } catch (error) {
    // A scratch workflow outside any project gets the SDK that runs the CLI (as the hooks do).
    if (!(error instanceof UnsupportedResolution) || !SDK.test(specifier)) throw error
    url = resolveBare(specifier, SDK_PARENT)
  }
  return sdkMap.get(url) ?? url
}

function compileFile(path) {
  const known = compiled.get(path)
  if (known !== undefined) return known
  const source = readFileSync(path, "utf8")
  const key = createHash("sha256").update(`${FORMAT}\0${path}\0${source}`).digest("hex").slice(0, 32)
  const dir = cacheDirectory()
  const url = pathToFileURL(join(dir, `${key}.mjs`)).href
  // Registered before the imports are followed, so import cycles end here.
  compiled.set(path, url)
  try {
    // The oxc output is cached too: a second run of an unchanged file never loads oxc.
    const transformedPath = join(dir, `${key}.oxc.js`)
    let code
    try {
      code = readFileSync(transformedPath, "utf8")
    } catch {
      code = compile(path, source)
      writeIfChanged(transformedPath, code)
    }
    writeIfChanged(fileURLToPath(url), rewrite(code, path))
  } catch (error) {
    compiled.delete(path)
    throw error
  }
  return url
}

function rewrite(code, path) {
  const [imports] = parse(code)
  let out = ""
  let at = 0
  let context = false
  for (const entry of imports) {
    if (entry.t === 3) {
      out += code.slice(at, entry.ss) + META
      at = entry.se
      context = true
    } else if (entry.t === 2) {
      out += code.slice(at, entry.ss) + DYNAMIC
      at = entry.ss + "import".length
      context = true
    } else if (entry.t === 1 && entry.n !== undefined) {
      const quote = code[entry.s - 1]
      if (quote !== '"' && quote !== "'") throw new UnsupportedResolution(`import in ${path}`)
      out += code.slice(at, entry.s) + JSON.stringify(rewriteTarget(entry.n, path)).slice(1, -1)
      at = entry.e
    } else {
      throw new UnsupportedResolution(`import form in ${path}`)
    }
  }
  out += code.slice(at)
  if (context) {
    const own = `${CONTEXT_URL}?of=${encodeURIComponent(pathToFileURL(path).href)}`
    // Import declarations are hoisted, so one at the end binds both names for the whole file.
    out += `import { meta as ${META}, load as ${DYNAMIC} } from ${JSON.stringify(own)};\n`
  }
  return out
}

/**
 * The cache URL of the compiled `path` (a .ts/.tsx/.mts/.jsx file) and everything it reaches;
 * throws UnsupportedResolution when the module hooks must load it instead. `bundleMap`
 * (SDK entry URL → bundled module URL) redirects this copy's SDK entries, here and in
 * files compiled later for `import()`.
 */
export async function compileWorkflow(path, bundleMap = new Map()) {
  await init
  sdkMap = bundleMap
  return compileFile(realpathSync(path))
}

/** `import.meta.resolve(specifier)` of the authored file `parentUrl` (the authored URL). */
export function resolveFrom(specifier, parentUrl) {
  const parentPath = fileURLToPath(parentUrl)
  if (!isPathLike(specifier)) return resolveBare(specifier, parentPath)
  try {
    return pathToFileURL(resolveRelative(specifier, parentPath)).href
  } catch (error) {
    // Like Node's import.meta.resolve, a missing relative file still has a URL.
    if (error instanceof UnsupportedResolution) return new URL(specifier, parentUrl).href
    throw error
  }
}

/** What `import(specifier)` in the authored file `parentUrl` loads (compiled if TS). */
export async function dynamicTarget(specifier, parentUrl) {
  await init
  return rewriteTarget(specifier, fileURLToPath(parentUrl))
}

export { UnsupportedResolution }
