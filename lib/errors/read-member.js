// Reading a member of a value that may be hostile (a throwing getter, a revoked proxy): failure
// reporting must never throw while it describes a failure. Shared by describeFailure() and
// `aml run`'s diagnostics.

/** `value[key]`, or `undefined` when reading it throws. */
export function readMember(value, key) {
  try {
    return value[key]
  } catch {
    return undefined
  }
}
