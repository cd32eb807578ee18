// The CLI's environment layering (cli.mdx "Environment loading"): Vite's loadEnv(mode,
// workflowDir, "") — `.env`, `.env.local`, `.env.<mode>`, `.env.<mode>.local`, later files
// winning — under the existing process environment, then `--runtime-env-file` over all.
import { readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"

import { expandValue, parseEnvText } from "./env-file.js"

/** Mode from NODE_ENV, `development` when absent (Vite's `loadEnv` rejects `local`). */
export function envMode(env) {
  const mode = env.NODE_ENV ?? "development"
  if (mode === "local") {
    throw new Error('"local" cannot be used as a mode name because it conflicts with the .local postfix for .env files.')
  }
  return mode
}

function readOptional(path) {
  try {
    return readFileSync(path, "utf8")
  } catch (error) {
    if (error?.code === "ENOENT" || error?.code === "ENOTDIR") return undefined
    throw new Error(`cannot read env file ${path}`, { cause: error })
  }
}

function collect(text, into) {
  for (const entry of parseEnvText(text)) into.set(entry.key, entry)
}

/**
 * Applies the workflow directory's env files to `env` (mutated; keys already present are
 * kept) and returns the names of the files that existed, in load order.
 */
export function applyWorkflowEnv(env, workflowDir) {
  const mode = envMode(env)
  const files = [".env", ".env.local", `.env.${mode}`, `.env.${mode}.local`]
  const entries = new Map()
  const loaded = []
  for (const name of files) {
    const path = join(workflowDir, name)
    const text = readOptional(path)
    if (text === undefined) continue
    loaded.push(path)
    collect(text, entries)
  }
  // dotenv-expand semantics: a reference sees the process environment first, then the
  // merged file values (expanded on demand, so order inside the files does not matter).
  const expanded = new Map()
  const lookup = (name, seen) => {
    if (Object.hasOwn(env, name)) return env[name]
    if (expanded.has(name)) return expanded.get(name)
    const entry = entries.get(name)
    if (entry === undefined || seen.has(name)) return undefined
    seen.add(name)
    const value = entry.literal ? entry.value : expandValue(entry.value, (next) => lookup(next, seen))
    expanded.set(name, value)
    return value
  }
  for (const key of entries.keys()) {
    const value = lookup(key, new Set())
    if (!Object.hasOwn(env, key)) env[key] = value
  }
  return loaded
}

/**
 * Finds `--runtime-env-file`: relative paths from `cwd` first, then the workflow directory.
 * Throws `runtime env file not found: <path from cwd>` when neither exists.
 */
export function resolveRuntimeEnvFile(file, cwd, workflowDir) {
  const candidates = [resolve(cwd, file), resolve(workflowDir, file)]
  for (const path of candidates) {
    try {
      if (statSync(path).isFile()) return path
    } catch {
      // Try the next candidate.
    }
  }
  throw new Error(`runtime env file not found: ${candidates[0]}`)
}

/** Applies the explicit env file over everything, including the process environment. */
export function applyRuntimeEnvFile(env, path) {
  let text
  try {
    text = readFileSync(path, "utf8")
  } catch (error) {
    throw new Error(`cannot read env file ${path}`, { cause: error })
  }
  // In file order: a reference sees the environment as updated by the lines before it.
  for (const entry of parseEnvText(text)) {
    env[entry.key] = entry.literal ? entry.value : expandValue(entry.value, (name) => env[name])
  }
}
