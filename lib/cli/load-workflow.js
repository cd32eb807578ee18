// Resolving and importing the workflow module for `aml run` (INVENTORY CLI-1 steps 1 and 3).
import { statSync } from "node:fs"
import { register } from "node:module"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

import { UnsupportedResolution, compileWorkflow } from "./inline-loader.js"
import { currentBundle } from "./sdk-bundle.js"
import { TRANSFORMED } from "./ts-compile.js"

let registered = false

/** Resolves `file` from `cwd`; throws the documented "not found" / "not a file" errors. */
export function resolveWorkflowFile(file, cwd) {
  const path = resolve(cwd, file)
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    if (error?.code === "ENOENT" || error?.code === "ENOTDIR") throw new Error(`workflow file not found: ${path}`)
    throw new Error(`cannot read workflow file ${path}`, { cause: error })
  }
  if (!stats.isFile()) throw new Error(`workflow path is not a file: ${path}`)
  return path
}

/** Registers the module hooks (tsx-hooks.js) once; the fallback of the in-process loader. */
export function registerHooks() {
  if (registered) return
  if (typeof register !== "function") throw new Error("aml run needs Node.js 20.6 or later (module.register)")
  register(new URL("./tsx-hooks.js", import.meta.url), {
    data: { sdkParentUrl: new URL("../../index.js", import.meta.url).href },
  })
  registered = true
}

// Flags that change how Node resolves or loads modules: then only Node's resolver (through
// the hooks) can load the workflow exactly as Node would.
const LOADER_FLAGS = /(?:^|\s)(?:-C|--conditions|--preserve-symlinks|--loader|--experimental-loader|--import|--experimental-default-type|--input-type)\b/

function inlineAllowed() {
  if (process.env.AML_RUN_LOADER === "hooks") return false
  return !LOADER_FLAGS.test(process.execArgv.join(" ")) && !LOADER_FLAGS.test(process.env.NODE_OPTIONS ?? "")
}

const INDEX_URL = new URL("../../index.js", import.meta.url).href
const loadFailure = (path, error) => new Error(`failed to load workflow file ${path}`, { cause: error })

/**
 * Decides how the workflow loads, before any of its code runs: compiled in process (with
 * `sdkUrl` the SDK copy it was linked against: the bundle when current) or, when that path
 * cannot take it, through the module hooks (`hooks: true`, the SDK's own modules).
 */
export async function prepareWorkflow(path) {
  // Stack traces through transformed files point at the authored TS/TSX lines.
  process.setSourceMapsEnabled(true)
  if (TRANSFORMED.test(path) && inlineAllowed()) {
    const bundle = currentBundle()
    try {
      return { hooks: false, sdkUrl: bundle?.index ?? INDEX_URL, url: await compileWorkflow(path, bundle?.map) }
    } catch (error) {
      if (!(error instanceof UnsupportedResolution)) throw loadFailure(path, error)
    }
  }
  return { hooks: true, sdkUrl: INDEX_URL, url: pathToFileURL(path).href }
}

/** Imports a prepared workflow and returns its module namespace. */
export async function importWorkflow(path, prepared) {
  if (prepared.hooks) registerHooks()
  try {
    return await import(prepared.url)
  } catch (error) {
    throw loadFailure(path, error)
  }
}
