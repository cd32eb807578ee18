// Which Sandbox leases have guest files that are host files (a local Sandbox; a Docker
// Sandbox whose root is a bind mount of a host directory). For those, <File> and
// <Include path> do the file work from the host through the confined Rust access
// (crates/aml-files/src/confined: directory descriptors, `openat2(RESOLVE_BENEATH)`), not
// through a guest shell script that a racing symlink swap could redirect.
//
// A built-in provider registers its lease handle (the frozen object every session carries
// by reference) with the real host directory of the lease root and that root's logical
// path. The registry is module-private: a provider cannot claim a host directory.

import { posix } from "node:path"

const HOST_FILES = new WeakMap()

/** Records that the lease with `handle` keeps its logical `root` in the host `directory`. */
export function registerHostFiles(handle, directory, root) {
  HOST_FILES.set(handle, { directory, root })
}

/**
 * The host side of a Sandbox session's files: `{ base, root }` for the confined access
 * (`root` is the session root relative to the lease's host directory), or undefined when
 * the guest's files are not host files.
 */
export function hostFilesOf(session) {
  const handle = session.lease.handle
  if (handle === null || (typeof handle !== "object" && typeof handle !== "function")) return undefined
  const host = HOST_FILES.get(handle)
  if (host === undefined) return undefined
  // A nested session root is the lease root or below it (SB-1 portable paths).
  const root = posix.relative(posix.normalize(host.root), posix.normalize(session.root)) || "."
  return { base: host.directory, root }
}
