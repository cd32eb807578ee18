// Workspace transfer for the remote Sandboxes (Daytona, Modal): the host tree is packed by
// Rust (crates/aml-workspace transfer.rs, the Workspace archive format: gzip tar, files and
// directories only) and a downloaded remote tree is mirrored back by Rust with the archive
// confinement rules (no `..`, no absolute paths, no links, bounded entries and bytes).
//
// A transfer is bounded by what one Node Buffer can hold, not by the provider's
// `maxOutputBytes` (that option bounds command and process output only).

import { constants } from "node:buffer"
import { promisify } from "node:util"
import { gzip } from "node:zlib"

import { sandboxTransferMirror, sandboxTransferPack } from "../../core/native.js"

const gzipAsync = promisify(gzip)

/** Entries one transfer may carry either way. */
export const MAX_TRANSFER_ENTRIES = 100_000

/** Bytes one transfer archive may have: the archive travels as one Buffer. */
export const MAX_TRANSFER_BYTES = constants.MAX_LENGTH

/** Deflate expands at most about 1032:1, which bounds what a gzip archive can extract to. */
const MAX_DEFLATE_RATIO = 1032

function failure(label, outcome) {
  const options = outcome.cause ? { cause: new Error(outcome.cause) } : undefined
  return new Error(`${label}: ${outcome.message}`, options)
}

/** The gzip tar of `root`; rejects with `${label}: …`. */
export async function packTree(root, label) {
  const outcome = await sandboxTransferPack(root, MAX_TRANSFER_BYTES, MAX_TRANSFER_ENTRIES)
  if (outcome.message) throw failure(label, outcome)
  return outcome.archive
}

const isGzip = (bytes) => bytes.byteLength >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

/**
 * A plain tar is whole 512-byte blocks ending in two zero blocks. Checked because a plain
 * stream has no checksum of its own: an empty or cut-off download would otherwise read
 * as a tree with files missing, and the mirror would delete them on the host.
 */
function isCompleteTar(bytes) {
  if (bytes.byteLength < 1024 || bytes.byteLength % 512 !== 0) return false
  for (let i = bytes.byteLength - 1024; i < bytes.byteLength; i++) if (bytes[i] !== 0) return false
  return true
}

/**
 * Makes `dest` hold exactly the tree of `archive`, a plain or gzip tar; rejects with
 * `${label}: …`. The remote side archives with a bare `tar -cf` (an image need not have
 * gzip), while the Rust mirror reads the Workspace archive format (gzip tar): a plain tar
 * is compressed on the host first.
 */
export async function mirrorArchive(archive, dest, label) {
  const bytes = Buffer.isBuffer(archive) ? archive : Buffer.from(archive.buffer ?? archive, archive.byteOffset ?? 0, archive.byteLength)
  // A plain tar extracts to at most its own length; a gzip one to its deflate bound.
  const compressed = isGzip(bytes)
  if (!compressed && !isCompleteTar(bytes)) throw new Error(`${label}: the remote archive is not a complete tar archive`)
  const maxExtracted = Math.min(compressed ? bytes.byteLength * MAX_DEFLATE_RATIO : bytes.byteLength, Number.MAX_SAFE_INTEGER)
  const gzipped = compressed ? bytes : await gzipAsync(bytes, { level: 1 })
  const outcome = await sandboxTransferMirror(gzipped, dest, maxExtracted, MAX_TRANSFER_ENTRIES)
  if (outcome.message) throw failure(label, outcome)
}
