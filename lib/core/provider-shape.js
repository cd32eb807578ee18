// Shape checks shared by the runtime options, the <Agent provider> prop and the
// define*Provider helpers. Each reads every member once, throws the exact TypeError of
// INVENTORY RT-1 / PA-2, and returns a frozen capture: later mutation of the provider object
// cannot change what the runtime calls.

import { isNormalized } from "../checks/normalized.js"

function captureNamed(provider, label, method) {
  if (typeof provider !== "object" || provider === null) {
    throw new TypeError(`${label} provider must be an object`)
  }
  const name = provider.name
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`${label} provider name must be a non-empty string`)
  }
  if (!isNormalized(name)) throw new TypeError(`${label} provider name must already be normalized`)
  const fn = provider[method]
  if (typeof fn !== "function") throw new TypeError(`${label} provider ${method} must be a function`)
  return { fn, name }
}

/** `{ name, run, supportsSandbox?, target }` of an Agent provider. */
export function captureAgentProvider(provider) {
  const { fn, name } = captureNamed(provider, "Agent", "run")
  const supportsSandbox = provider.supportsSandbox
  if (supportsSandbox !== undefined && typeof supportsSandbox !== "function") {
    throw new TypeError("Agent provider supportsSandbox must be a function when provided")
  }
  return Object.freeze({ name, run: fn, supportsSandbox, target: provider })
}

/** `{ name, acquire, target }` of a Sandbox provider. */
export function captureSandboxProvider(provider) {
  const { fn, name } = captureNamed(provider, "Sandbox", "acquire")
  return Object.freeze({ acquire: fn, name, target: provider })
}

/** `{ name, acquire, target }` of a Workspace provider. */
export function captureWorkspaceProvider(provider) {
  const { fn, name } = captureNamed(provider, "Workspace", "acquire")
  return Object.freeze({ acquire: fn, name, target: provider })
}
