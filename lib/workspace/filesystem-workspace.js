// BW-2 `filesystemWorkspace()`: a persistent Workspace provider over the filesystem store,
// run entirely in Rust (revisions never cross into JS).

import { checkDirectory, FilesystemWorkspaceStorage } from "./filesystem-storage.js"
import { isNormalized } from "../checks/normalized.js"
import { createPersistentWorkspaceProvider } from "./persistence.js"

export function filesystemWorkspace(options) {
  const directory = checkDirectory(options)
  const { format, maxArchiveBytes, maxEntries, maxExtractedBytes, temporaryDirectory } = options
  if (temporaryDirectory !== undefined && (!isNormalized(temporaryDirectory) || temporaryDirectory.includes("\0"))) {
    throw new TypeError("Filesystem Workspace temporaryDirectory must be a non-empty normalized string")
  }
  return createPersistentWorkspaceProvider({
    format,
    maxArchiveBytes,
    maxEntries,
    maxExtractedBytes,
    storage: new FilesystemWorkspaceStorage({ directory }),
    temporaryDirectory,
  })
}
