// Bare-specifier resolution for the in-process loader (inline-loader.js): Node's ESM
// algorithm (PACKAGE_RESOLVE: self-reference, node_modules lookup, `exports` with the default
// conditions, legacy `main`), restricted to the common cases. Anything else — `imports` (#x),
// deprecated folder mappings, invalid targets, a name that is not found — throws
// `UnsupportedResolution`, and the caller falls back to Node's own resolver (module hooks),
// which then also reports the error exactly as Node does.
import { readFileSync, realpathSync, statSync } from "node:fs"
import { isBuiltin } from "node:module"
import { basename, dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

export class UnsupportedResolution extends Error {}

// Node's default ESM conditions (`module-sync` exists where require(esm) does).
const CONDITIONS = new Set(["node", "import", "node-addons", "default"])
if (process.features?.require_module === true) CONDITIONS.add("module-sync")

const unsupported = (why) => {
  throw new UnsupportedResolution(why)
}

function kind(path) {
  try {
    const stats = statSync(path)
    return stats.isFile() ? "file" : stats.isDirectory() ? "directory" : "other"
  } catch {
    return "none"
  }
}

const jsonCache = new Map()
function readJson(path) {
  if (!jsonCache.has(path)) {
    let json = null
    try {
      json = JSON.parse(readFileSync(path, "utf8"))
    } catch (error) {
      if (error?.code !== "ENOENT") unsupported(`unreadable ${path}`)
    }
    jsonCache.set(path, json)
  }
  return jsonCache.get(path)
}

/** The nearest package.json above `directory` (not past a node_modules folder). */
function packageScope(directory) {
  for (let dir = directory; ; dir = dirname(dir)) {
    if (basename(dir) === "node_modules") return null
    const json = readJson(join(dir, "package.json"))
    if (json !== null) return { dir, json }
    if (dirname(dir) === dir) return null
  }
}

function finalize(path) {
  if (kind(path) !== "file") unsupported(`not a file: ${path}`)
  return pathToFileURL(realpathSync(path)).href
}

function target(pkgDir, value, match) {
  if (typeof value === "string") {
    if (!value.startsWith("./")) unsupported(`package target ${value}`)
    const resolved = match === undefined ? value : value.replaceAll("*", match)
    const segments = resolved.slice(2).split(/[/\\]/)
    if (segments.some((part) => part === "" || part === "." || part === ".." || part.toLowerCase() === "node_modules")) {
      unsupported(`package target ${resolved}`)
    }
    return finalize(join(pkgDir, ...segments))
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      try {
        const found = target(pkgDir, item, match)
        if (found !== undefined && found !== null) return found
      } catch (error) {
        if (!(error instanceof UnsupportedResolution)) throw error
      }
    }
    return unsupported("no usable target in an array")
  }
  if (value !== null && typeof value === "object") {
    for (const [condition, inner] of Object.entries(value)) {
      if (!CONDITIONS.has(condition)) continue
      const found = target(pkgDir, inner, match)
      if (found !== undefined) return found
    }
    return undefined
  }
  return value === null ? null : unsupported("invalid package target")
}

function exportsResolve(pkgDir, subpath, exports) {
  const keys = exports !== null && typeof exports === "object" && !Array.isArray(exports) ? Object.keys(exports) : []
  const sugar = keys.length === 0 || !keys[0].startsWith(".")
  let found
  if (sugar) {
    if (subpath !== ".") unsupported("subpath not exported")
    found = target(pkgDir, exports)
  } else if (Object.hasOwn(exports, subpath) && !subpath.includes("*")) {
    found = target(pkgDir, exports[subpath])
  } else {
    // The most specific pattern wins (longest part before the `*`), as in Node.
    let best
    for (const key of keys) {
      const star = key.indexOf("*")
      if (star < 0 || key.indexOf("*", star + 1) >= 0) continue
      const prefix = key.slice(0, star)
      const suffix = key.slice(star + 1)
      if (!subpath.startsWith(prefix) || subpath.length < key.length || !subpath.endsWith(suffix)) continue
      if (best === undefined || prefix.length > best.prefix.length) best = { key, prefix, suffix }
    }
    if (best === undefined) unsupported("subpath not exported")
    found = target(pkgDir, exports[best.key], subpath.slice(best.prefix.length, subpath.length - best.suffix.length))
  }
  return found ?? unsupported("subpath resolves to null")
}

function legacyMain(pkgDir, json) {
  const main = typeof json?.main === "string" ? json.main : undefined
  const candidates = main === undefined ? [] : [main, `${main}.js`, `${main}.json`, `${main}.node`, `${main}/index.js`, `${main}/index.json`, `${main}/index.node`]
  for (const candidate of [...candidates, "index.js", "index.json", "index.node"]) {
    const path = join(pkgDir, candidate)
    if (kind(path) === "file") return pathToFileURL(realpathSync(path)).href
  }
  return unsupported(`no main in ${pkgDir}`)
}

/**
 * The file URL a bare `specifier` imported from the file `parentPath` resolves to, or
 * `node:<name>` for a builtin. Throws UnsupportedResolution when Node's resolver must decide.
 */
export function resolveBare(specifier, parentPath) {
  if (specifier.startsWith("node:")) return specifier
  if (isBuiltin(specifier)) return `node:${specifier}`
  if (specifier.startsWith("#") || specifier.includes("\\") || specifier.includes("%")) unsupported(specifier)
  const slash = specifier.indexOf("/", specifier.startsWith("@") ? specifier.indexOf("/") + 1 : 0)
  const name = slash < 0 ? specifier : specifier.slice(0, slash)
  if (name === "" || name.startsWith(".") || (name.startsWith("@") && !name.includes("/"))) unsupported(specifier)
  const subpath = `.${specifier.slice(name.length)}`
  const scope = packageScope(dirname(parentPath))
  if (scope !== null && scope.json.name === name && scope.json.exports != null) return exportsResolve(scope.dir, subpath, scope.json.exports)
  for (let dir = dirname(parentPath); ; dir = dirname(dir)) {
    const pkgDir = join(dir, "node_modules", ...name.split("/"))
    if (kind(pkgDir) === "directory") {
      const json = readJson(join(pkgDir, "package.json"))
      if (json?.exports != null) return exportsResolve(pkgDir, subpath, json.exports)
      if (subpath === ".") return legacyMain(pkgDir, json)
      return finalize(join(pkgDir, ...subpath.slice(2).split("/")))
    }
    if (dirname(dir) === dir) break
  }
  return unsupported(`${specifier} not found from ${parentPath}`)
}

