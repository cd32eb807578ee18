// WP-2 `workspaceStorageSegment(id)`: the one storage path segment of a Workspace id
// (crates/aml-workspace/src/paths.rs computes the same for the native stores).

import { isNormalized } from "../core/normalized.js"

const RESERVED = /[!'()*]/g

export function workspaceStorageSegment(id) {
  if (!isNormalized(id)) throw new TypeError("Workspace storage id must be a non-empty normalized string")
  if (id === ".") return "%2E"
  if (id === "..") return "%2E%2E"
  return encodeURIComponent(id).replace(RESERVED, (mark) => `%${mark.charCodeAt(0).toString(16).toUpperCase()}`)
}
