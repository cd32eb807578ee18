// s3Workspace() option validation (BW-3): every check and message, in one place. The factory
// performs no I/O; the client (application-supplied or native) is only used at acquisition.

import { tmpdir } from "node:os"

// Provider option validators reject "\0" on top of the normalized-string rule.
import { isNormalizedName as isNormalizedOption } from "../../checks/normalized.js"
import { s3LockLeaseProblem } from "../../core/native.js"
import { isRecord } from "../../checks/shapes.js"

export const S3_DEFAULT_PREFIX = "aml/workspaces"
const LIMITS = ["maxArchiveBytes", "maxEntries", "maxExtractedBytes"]



/** An AWS SDK v3 client is recognised by its `send` method, so copies and mocks pass too. */
export function isS3ClientLike(value) {
  return isRecord(value) && typeof value.send === "function"
}

export function checkS3Prefix(prefix) {
  if (!isNormalizedOption(prefix)) throw new TypeError("S3 Workspace prefix must be a non-empty normalized string")
  const segments = prefix.split("/")
  if (segments.some((segment) => segment === "")) {
    throw new TypeError("S3 Workspace prefix must not start or end with / or contain empty segments")
  }
  if (segments.some((segment) => segment === "." || segment === "..") || prefix.includes("\\")) {
    throw new TypeError("S3 Workspace prefix must not contain traversal segments")
  }
}

/** Returns the normalized options; throws the documented TypeError/RangeError otherwise. */
export function validateS3WorkspaceOptions(options) {
  if (!isRecord(options)) throw new TypeError("S3 Workspace options must be an object")
  const { bucket, client, config } = options
  if (!isNormalizedOption(bucket)) throw new TypeError("S3 Workspace bucket must be a non-empty normalized string")
  if (client !== undefined && config !== undefined) throw new TypeError("S3 Workspace accepts client or config, not both")
  if (client !== undefined && !isS3ClientLike(client)) throw new TypeError("S3 Workspace client must be an S3Client")
  if (config !== undefined && !isRecord(config)) throw new TypeError("S3 Workspace config must be an S3ClientConfig object")
  const prefix = options.prefix === undefined ? S3_DEFAULT_PREFIX : options.prefix
  checkS3Prefix(prefix)
  const format = options.format === undefined ? "archive" : options.format
  if (format !== "archive" && format !== "folder") throw new TypeError('S3 Workspace format must be "archive" or "folder"')
  const limits = {}
  for (const label of LIMITS) {
    const value = options[label]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`S3 Workspace ${label} must be a positive safe integer`)
    limits[label] = value
  }
  const { lockLeaseMs } = options
  if (lockLeaseMs !== undefined) {
    // The bounds are the lock's (crates/aml-s3/src/lease_time.rs): 1 s to the reference's 20 min.
    // Anything but a number is judged as NaN, which is never a lease.
    const problem = s3LockLeaseProblem(typeof lockLeaseMs === "number" ? lockLeaseMs : Number.NaN)
    if (problem !== null) throw new RangeError(problem)
  }
  const temporaryDirectory = options.temporaryDirectory === undefined ? tmpdir() : options.temporaryDirectory
  if (!isNormalizedOption(temporaryDirectory)) {
    throw new TypeError("S3 Workspace temporaryDirectory must be a non-empty normalized string")
  }
  const lease = lockLeaseMs === undefined ? {} : { lockLeaseMs }
  return { bucket, client, config, prefix, format, ...limits, ...lease, temporaryDirectory }
}
