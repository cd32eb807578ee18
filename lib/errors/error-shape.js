// How a thrown value is described in trace attributes: `error.type` is the error's name
// (or `typeof`), `error.message` its message. Hostile values (throwing getters, proxies)
// must never break the run, so every read is guarded.

export function describeError(error) {
  try {
    if (error instanceof Error) {
      return { type: String(error.name), message: String(error.message) }
    }
    if (typeof error === "string") return { type: "string", message: error }
    if (error === null) return { type: "object", message: "null" }
    return { type: typeof error, message: "Non-Error object was thrown" }
  } catch {
    return { type: "unknown", message: "Non-Error object was thrown" }
  }
}
