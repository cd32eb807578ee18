// "Normalized string": non-empty and equal to its own trim (INVENTORY §0), with JavaScript's
// white-space set (U+FEFF is trimmed, U+0085 is not). The Rust side uses the same set
// (aml_text::is_normalized), so a name or id passes or fails alike on both sides.
export function isNormalized(value) {
  return typeof value === "string" && value.length > 0 && value === value.trim()
}

/** A normalized string without NUL: what names a file, a directory or a stored object. */
export function isNormalizedName(value) {
  return isNormalized(value) && !value.includes("\0")
}
