// Shape checks shared by the runtime options and the define*Provider helpers. Each throws
// the exact TypeError of INVENTORY RT-1 / PA-2 and returns the provider unchanged.

function checkNamed(provider, label, method) {
  if (typeof provider !== "object" || provider === null) {
    throw new TypeError(`${label} provider must be an object`)
  }
  const name = provider.name
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`${label} provider name must be a non-empty string`)
  }
  if (name !== name.trim()) throw new TypeError(`${label} provider name must already be normalized`)
  if (typeof provider[method] !== "function") {
    throw new TypeError(`${label} provider ${method} must be a function`)
  }
  return provider
}

export function checkAgentProvider(provider) {
  checkNamed(provider, "Agent", "run")
  const supports = provider.supportsSandbox
  if (supports !== undefined && typeof supports !== "function") {
    throw new TypeError("Agent provider supportsSandbox must be a function when provided")
  }
  return provider
}

export function checkSandboxProvider(provider) {
  return checkNamed(provider, "Sandbox", "acquire")
}

export function checkWorkspaceProvider(provider) {
  return checkNamed(provider, "Workspace", "acquire")
}
