// Workspace transfer for the remote Sandboxes (Daytona, Modal): the host tree is packed by
// Rust (crates/aml-workspace transfer.rs, the Workspace archive format: gzip tar, files and
// directories only) and a downloaded remote tree is mirrored back by Rust with the archive
// confinement rules (no `..`, no absolute paths, no links, bounded entries and bytes).

import { sandboxTransferMirror, sandboxTransferPack } from "./native.js"

/** Entries one transfer may carry either way. */
export const MAX_TRANSFER_ENTRIES = 100_000

function failure(label, outcome) {
  const options = outcome.cause ? { cause: new Error(outcome.cause) } : undefined
  return new Error(`${label}: ${outcome.message}`, options)
}

/** The gzip tar of `root` (at most `maxBytes` long); rejects with `${label}: …`. */
export async function packTree(root, maxBytes, label) {
  const outcome = await sandboxTransferPack(root, maxBytes, MAX_TRANSFER_ENTRIES)
  if (outcome.message) throw failure(label, outcome)
  return outcome.archive
}

/** Makes `dest` hold exactly the tree of `archive`; rejects with `${label}: …`. */
export async function mirrorArchive(archive, dest, maxBytes, label) {
  const bytes = Buffer.isBuffer(archive) ? archive : Buffer.from(archive.buffer ?? archive, archive.byteOffset ?? 0, archive.byteLength)
  // A compressed tree may expand; extraction is bounded to 1024× the transfer budget.
  const outcome = await sandboxTransferMirror(bytes, dest, Math.min(maxBytes * 1024, Number.MAX_SAFE_INTEGER), MAX_TRANSFER_ENTRIES)
  if (outcome.message) throw failure(label, outcome)
}
