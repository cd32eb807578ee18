// Object keys of the S3 Workspace store: `<prefix>/<segment(id)>/<path>`, and the storage
// path rule (relative, "/"-separated, no empty/"."/".." segments, no "\" or control chars).
// The segment encoding is WP-2's workspaceStorageSegment; crates/aml-s3/src/segment.rs is
// the same rule in Rust.

export function storageSegment(id) {
  if (typeof id !== "string" || id.length === 0 || id !== id.trim()) {
    throw new TypeError("Workspace storage id must be a non-empty normalized string")
  }
  if (id === "." || id === "..") return "%2E".repeat(id.length)
  return encodeURIComponent(id).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

export function isStoragePath(path) {
  return (
    typeof path === "string" &&
    path.length > 0 &&
    !path.includes("\\") &&
    !CONTROL.test(path) &&
    path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..")
  )
}

export function isListPrefix(prefix) {
  return prefix === "" || (typeof prefix === "string" && isStoragePath(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix))
}

export function invalidPath(path) {
  return new Error(`S3 Workspace storage path "${path}" is invalid`)
}
