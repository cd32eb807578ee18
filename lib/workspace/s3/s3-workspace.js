// BW-3 `s3Workspace()`: the persistent Workspace provider over S3. The revision lifecycle is
// the shared one (lib/workspace/persistence.js over crates/aml-workspace); this file only
// picks the storage adapter: the application's own AWS SDK client when `client` is given,
// otherwise the native client of crates/aml-s3 built lazily from `config`.

import { createS3ClientStorage } from "./client-storage.js"
import { createS3NativeStorage } from "./native-storage.js"
import { validateS3WorkspaceOptions } from "./options.js"
import { createPersistentWorkspaceProvider } from "../persistence.js"

export function s3Workspace(options) {
  const checked = validateS3WorkspaceOptions(options)
  const { bucket, client, config, lockLeaseMs, prefix } = checked
  const storage =
    client !== undefined
      ? createS3ClientStorage({ bucket, client, lockLeaseMs, prefix })
      : createS3NativeStorage({ bucket, config, lockLeaseMs, prefix })
  return createPersistentWorkspaceProvider({
    format: checked.format,
    maxArchiveBytes: checked.maxArchiveBytes,
    maxEntries: checked.maxEntries,
    maxExtractedBytes: checked.maxExtractedBytes,
    storage,
    temporaryDirectory: checked.temporaryDirectory,
  })
}
