// <Workspace> props (INVENTORY WS-1): every prop is read once and checked in the documented
// order, and turned into the frozen acquire request, the save policy and the logical cwd.
// Nothing here performs I/O or calls provider code except the provider shape capture.

import { randomUUID } from "node:crypto"

import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { isNormalized } from "../checks/normalized.js"
import { resolvePortablePath } from "../sandbox/portable-path.js"
import { masked } from "../core/component-scope.js"
import { captureWorkspaceProvider } from "../core/provider-shape.js"
import { isRecord as isOptions } from "../checks/shapes.js"

const EMPTY = Object.freeze([])


/**
 * A persistence or load glob: normalized, relative, forward-slash, no negation and no
 * parent traversal, so a pattern can never select outside the materialization root.
 */
function isPortableGlob(value) {
  if (!isNormalized(value) || value.includes("\0")) return false
  if (value.startsWith("!") || value.startsWith("/") || value.includes("\\")) return false
  return !value.split("/").includes("..")
}

function readGlobs(label, value) {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) throw propTypeError(`<Workspace> ${label} must be an array`, value)
  const globs = [...value]
  globs.forEach((glob, index) => {
    if (!isPortableGlob(glob)) {
      throw new EvaluationError(
        `<Workspace> ${label}[${index}] must be a normalized relative forward-slash glob without negation`,
      )
    }
  })
  return Object.freeze(globs)
}

function readLoad(value) {
  if (value === undefined || value === true) return Object.freeze({ exclude: EMPTY, revision: "current" })
  if (value === false) return false
  if (!isOptions(value)) throw propTypeError("<Workspace> load must be a boolean or options object", value)
  const revision = value.revision ?? "current"
  if (!isNormalized(revision)) throw propTypeError("<Workspace> load revision must be a non-empty normalized string", revision)
  const include = readGlobs("load include", value.include)
  const exclude = readGlobs("load exclude", value.exclude) ?? EMPTY
  const load = { exclude, revision }
  if (include !== undefined) load.include = include
  return Object.freeze(load)
}

/** `false`, or the save policy `{ on, retention, gitignore, include?, exclude }`. */
function readSave(value) {
  if (value === undefined || value === false) return false
  if (value === true) return Object.freeze({ exclude: EMPTY, gitignore: true, on: "success", retention: 1 })
  if (!isOptions(value)) throw propTypeError("<Workspace> save must be a boolean or options object", value)
  const on = value.on ?? "success"
  if (on !== "always" && on !== "success") throw propTypeError('<Workspace> save on must be "always" or "success"', on)
  const retention = value.retention ?? 1
  if (!Number.isSafeInteger(retention) || retention <= 0) {
    throw propTypeError("<Workspace> save retention must be a positive safe integer", retention)
  }
  const gitignore = value.gitignore ?? true
  if (typeof gitignore !== "boolean") throw propTypeError("<Workspace> save gitignore must be a boolean", gitignore)
  const include = readGlobs("save include", value.include)
  const exclude = readGlobs("save exclude", value.exclude) ?? EMPTY
  const save = { exclude, gitignore, on, retention }
  if (include !== undefined) save.include = include
  return Object.freeze(save)
}

/**
 * Reads `<Workspace>` props in the WS-1 order. `fallback` is the runtime's captured
 * `workspaceProvider`. Returns `{ cwd, id, load, lock, provider, save, writeConcurrency }`.
 */
export function readWorkspaceProps(props, fallback) {
  const idProp = props.id
  if (idProp !== undefined && !isNormalized(idProp)) {
    throw propTypeError("<Workspace> id must be a non-empty normalized string", idProp)
  }
  const cwdProp = props.cwd
  const cwd = cwdProp === undefined ? "." : resolvePortablePath("<Workspace> cwd", cwdProp, ".")
  const load = readLoad(props.load)
  const lock = props.lock ?? true
  if (typeof lock !== "boolean") throw propTypeError("<Workspace> lock must be a boolean", lock)
  const save = readSave(props.save)
  const writeConcurrency = props.writeConcurrency ?? "serial"
  if (writeConcurrency !== "parallel" && writeConcurrency !== "serial") {
    throw propTypeError('<Workspace> writeConcurrency must be "parallel" or "serial"', writeConcurrency)
  }
  const providerProp = props.provider
  const provider = providerProp === undefined ? fallback : masked(captureWorkspaceProvider, providerProp)
  if (provider === undefined) throw new EvaluationError("<Workspace> requires a provider or AmlRuntime workspaceProvider")
  // The default identity is drawn only once every prop is valid.
  const id = idProp ?? randomUUID()
  return { cwd, id, load, lock, provider, save, writeConcurrency }
}

/** The frozen WorkspaceSaveRequest for an outcome, from the save policy. */
export function saveRequest(save, outcome, signal) {
  const request = { exclude: save.exclude, gitignore: save.gitignore, outcome, retention: save.retention, signal }
  if (save.include !== undefined) request.include = save.include
  return Object.freeze(request)
}
