// Export selection for `aml run` (INVENTORY CLI-1 step 4): `--entry`, else `default`, else a
// `main` function. Returns the selected value, not yet called or awaited.

function available(namespace) {
  const names = Object.keys(namespace).sort()
  return names.length === 0 ? "none" : names.join(", ")
}

export function selectExport(namespace, file, entry) {
  if (entry !== undefined) {
    if (!Object.hasOwn(namespace, entry)) {
      throw new Error(`file "${file}" does not export "${entry}". Available exports: ${available(namespace)}`)
    }
    return namespace[entry]
  }
  if (Object.hasOwn(namespace, "default")) return namespace.default
  if (typeof namespace.main === "function") return namespace.main
  throw new Error(`file "${file}" must export either "default" or "main()". Available exports: ${available(namespace)}`)
}
