// <Agent> props, checked when the node is entered and before its children (INVENTORY AG-1).
// Each prop is read once; the result is what the rest of the Agent protocol uses.

import { masked } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { resolvePortablePath } from "../sandbox/portable-path.js"
import { captureAgentProvider } from "../core/provider-shape.js"

const DEFAULT_PERMISSIONS = Object.freeze({ filesystem: "read-write", network: true, shell: true })

function readPermissions(value) {
  if (value === undefined) return DEFAULT_PERMISSIONS
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw propTypeError("<Agent> permissions must be an object", value)
  }
  const filesystem = value.filesystem
  if (filesystem !== undefined && filesystem !== "read-only" && filesystem !== "read-write") {
    throw propTypeError('<Agent> permissions.filesystem must be "read-only" or "read-write"', filesystem)
  }
  const permissions = { ...DEFAULT_PERMISSIONS }
  if (filesystem !== undefined) permissions.filesystem = filesystem
  for (const name of ["network", "shell"]) {
    const flag = value[name]
    if (flag !== undefined && typeof flag !== "boolean") {
      throw propTypeError(`<Agent> permissions.${name} must be a boolean`, flag)
    }
    if (flag !== undefined) permissions[name] = flag
  }
  return permissions
}

/**
 * Reads an Agent node's props. `sandbox` is the active Sandbox session, if any: a read-only
 * Sandbox forces read-only filesystem permissions. Returns the captured Agent entry.
 */
export function readAgentProps(props, runtimeProvider, sandbox) {
  const model = props.model
  const system = props.system
  const permissionsProp = props.permissions
  const providerProp = props.provider
  const cwd = props.cwd
  // The common case — only children — shares one frozen entry per runtime provider.
  if (
    model === undefined &&
    system === undefined &&
    permissionsProp === undefined &&
    providerProp === undefined &&
    cwd === undefined &&
    sandbox === undefined
  ) {
    return defaultEntry(runtimeProvider)
  }
  return readProps(model, system, permissionsProp, providerProp, cwd, runtimeProvider, sandbox)
}

const DEFAULT_ENTRIES = new WeakMap()
const NO_PROVIDER_ENTRY = Object.freeze({ permissions: DEFAULT_PERMISSIONS })

/** The shared frozen entry of an Agent with no props but its children (lib/agents/direct.js too). */
export function defaultEntry(provider) {
  if (provider === undefined) return NO_PROVIDER_ENTRY
  let entry = DEFAULT_ENTRIES.get(provider)
  if (entry === undefined) {
    entry = Object.freeze({ permissions: DEFAULT_PERMISSIONS, provider })
    DEFAULT_ENTRIES.set(provider, entry)
  }
  return entry
}

function readProps(model, system, permissionsProp, providerProp, cwd, runtimeProvider, sandbox) {
  if (model !== undefined && typeof model !== "string") {
    throw propTypeError("<Agent> model must be a string", model)
  }
  if (system !== undefined && typeof system !== "string") {
    throw propTypeError("<Agent> system must be a string", system)
  }
  const permissions = { ...readPermissions(permissionsProp) }
  if (sandbox?.access === "read-only") permissions.filesystem = "read-only"
  const provider =
    providerProp === undefined ? runtimeProvider : masked(captureAgentProvider, providerProp)
  if (cwd !== undefined && sandbox === undefined) {
    throw new EvaluationError("<Agent> cwd requires an enclosing <Sandbox>")
  }
  return {
    cwd,
    model,
    permissions: Object.freeze(permissions),
    provider,
    // The session the provider sees (handshake and context.sandbox): `<Agent cwd>` resolves
    // from the Sandbox root and replaces only the session's cwd.
    sandbox:
      cwd === undefined || sandbox === undefined
        ? sandbox
        : Object.freeze({ ...sandbox, cwd: resolvePortablePath("<Agent> cwd", cwd, sandbox.root) }),
    system,
  }
}
