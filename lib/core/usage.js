// normalizeUsage (issue 37): the engine's validation of AgentResponse.usage for consumers
// (a studio, an exporter, a provider adapter) that hold a usage object of their own.

import { normalizeUsage as nativeNormalizeUsage } from "./native.js"

/**
 * `usage` with only its reported fields, frozen; `undefined` for `undefined`/`null` or an
 * object that reports nothing. A bad value throws a TypeError naming the field.
 */
export function normalizeUsage(usage) {
  if (usage === undefined || usage === null) return undefined
  let normalized
  try {
    normalized = nativeNormalizeUsage(usage)
  } catch (error) {
    throw new TypeError(error.message)
  }
  return normalized == null ? undefined : Object.freeze(normalized)
}
