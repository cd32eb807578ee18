// Resolving and importing the workflow module for `aml run` (INVENTORY CLI-1 steps 1 and 3).
import { statSync } from "node:fs"
import { register } from "node:module"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

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

function registerHooks() {
  if (registered) return
  if (typeof register !== "function") throw new Error("aml run needs Node.js 20.6 or later (module.register)")
  register(new URL("./tsx-hooks.js", import.meta.url), {
    data: { sdkParentUrl: new URL("../../index.js", import.meta.url).href },
  })
  // Stack traces through transformed files point at the authored TS/TSX lines.
  process.setSourceMapsEnabled(true)
  registered = true
}

/** Imports the workflow (TS, TSX or JS) and returns its module namespace. */
export async function importWorkflow(path) {
  registerHooks()
  try {
    return await import(pathToFileURL(path).href)
  } catch (error) {
    throw new Error(`failed to load workflow file ${path}`, { cause: error })
  }
}
