// The realm-wide Tool registry (RT-4): the exact object returned by defineTool() maps to its
// private execution port. Only that identity is a Tool; structural copies, clones and proxies
// are not, so replacing public members cannot bypass validation.

import { realmSingleton } from "../core/realm.js"

export const toolRegistry = realmSingleton(
  "@aml-jsx/sdk/tool-registry",
  () => new WeakMap(),
  (value) => value instanceof WeakMap,
  "AML Tool registry has an invalid global value",
)

/** The execution port of a registered Tool, or undefined for anything else. */
export function toolPort(value) {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined
  return toolRegistry.get(value)
}
