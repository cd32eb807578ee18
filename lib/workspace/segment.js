// WP-2 `workspaceStorageSegment(id)`: the one storage path segment of a Workspace id. The rule
// exists once, in Rust (aml_workspace::paths::workspace_storage_segment, which the filesystem
// store and the S3 key layout use too); this wrapper keeps the JS surface: the TypeError class,
// and encodeURIComponent's own URIError for a string that is not well-formed UTF-16.

import { workspaceStorageSegment as nativeSegment } from "../core/native.js"

export function workspaceStorageSegment(id) {
  let segment
  try {
    segment = nativeSegment(typeof id === "string" ? id : "")
  } catch (error) {
    throw new TypeError(error.message)
  }
  if (!id.isWellFormed()) encodeURIComponent(id)
  return segment
}
