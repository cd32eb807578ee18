// "Normalized string": non-empty and equal to its own trim (INVENTORY §0).
export function isNormalized(value) {
  return typeof value === "string" && value.length > 0 && value === value.trim()
}
