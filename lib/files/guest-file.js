// Guest-side file access for <File> and <Include path> inside a Sandbox whose guest files
// are not host files (Daytona, Modal, any provider's own runtime; a local or Docker Sandbox
// is served from the host, lib/sandbox/host-files.js). The guest is reached only through the
// lease's SandboxRuntime, so the same code serves any container or remote VM. The POSIX `sh`
// scripts below apply the host rules of aml-files (confined) as far as a shell can, in ONE
// guest process:
//   - the walk enters each parent with `cd -P` after refusing a symlink or non-directory
//     (missing ones are created for a write), then checks with `pwd -P` that it landed in
//     exactly `<previous>/<segment>`: a parent swapped for a link between the check and the
//     `cd` is refused, and everything after works relative to the entered directory, so a
//     later swap of an ancestor cannot redirect it;
//   - the destination must be a regular file; content goes to `.aml-file-<uuid>.tmp`
//     (noclobber) and `mv -fT` renames it over the destination without following a link;
//     a read opens with `dd iflag=nofollow` where the guest's `dd` has it.
// The remaining limit (a destination swapped for a link between its check and `cat`, on a
// guest without `dd iflag=nofollow`) is in docs/SANDBOX.md. Every name is passed as `./…`,
// so `-` is a file, never stdin. The scripts' stderr is silenced: failures are exit codes,
// never shell text.

import { randomUUID } from "node:crypto"

import { FILE_READ_LIMIT_BYTES } from "../core/native.js"

const PARENT = 3
const NOT_REGULAR = 4
const MISSING = 5

const WALK = `
exec 3>&2 2>/dev/null
rest=$1
prefix=
here=$(pwd -P) || exit 1
while case $rest in */*) true ;; *) false ;; esac; do
  seg=\${rest%%/*}
  rest=\${rest#*/}
  prefix=\${prefix:+$prefix/}$seg
  if [ -L "./$seg" ] || { [ -e "./$seg" ] && [ ! -d "./$seg" ]; }; then printf '%s' "$prefix" >&3; exit ${PARENT}; fi
  if [ ! -d "./$seg" ]; then
    [ "$create" = 1 ] || exit ${MISSING}
    mkdir -- "./$seg" || [ -d "./$seg" ] || exit 1
  fi
  cd -P -- "./$seg" || exit 1
  next=$(pwd -P) || exit 1
  if [ "$next" != "\${here%/}/$seg" ]; then printf '%s' "$prefix" >&3; exit ${PARENT}; fi
  here=$next
done
name=$rest
if [ -L "./$name" ] || { [ -e "./$name" ] && [ ! -f "./$name" ]; }; then exit ${NOT_REGULAR}; fi
`

const WRITE_SCRIPT = `create=1
${WALK}
tmp=.aml-file-$2.tmp
trap 'rm -f -- "./$tmp"' EXIT
(set -C; cat > "./$tmp") || exit 1
if ! mv -fT -- "./$tmp" "./$name"; then
  if [ -d "./$name" ] || [ -L "./$name" ]; then exit ${NOT_REGULAR}; fi
  exit 1
fi
trap - EXIT
`

const READ_SCRIPT = `create=0
${WALK}
[ -e "./$name" ] || exit ${MISSING}
if dd if=/dev/null of=/dev/null iflag=nofollow status=none; then exec dd if="./$name" iflag=nofollow bs=65536 status=none; fi
exec cat -- "./$name"
`

/** The segment a refused parent names: a portable path, far below this. */
const STDERR_LIMIT_BYTES = 64 * 1024

/**
 * The bytes of `stream`, or undefined once more than `limit` arrived (the rest is cancelled,
 * never buffered): a guest file may be of any size, the host's memory is not.
 */
async function drain(stream, limit) {
  const reader = stream.getReader()
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/**
 * Runs `script` with `args` in the session root through `runtime.spawn`, feeding `input`
 * on stdin. Resolves with `{ exitCode, stderr, stdout }` (stdout as bytes).
 */
async function runGuest(session, script, args, input, signal) {
  const child = await session.lease.runtime.spawn("sh", ["-c", script, "aml-file", ...args], {
    cwd: session.root,
    signal,
  })
  const output = Promise.all([drain(child.stdout, FILE_READ_LIMIT_BYTES), drain(child.stderr, STDERR_LIMIT_BYTES)])
  const writer = child.stdin.getWriter()
  try {
    if (input !== undefined && input.byteLength > 0) await writer.write(input)
    await writer.close()
  } catch {
    // The process may exit without reading stdin (a refused parent): its exit code says why.
  }
  const [stdout, stderr] = await output
  // Past a limit the guest command is of no more use: end it rather than wait it out.
  if (stdout === undefined || stderr === undefined) await child.kill()
  const { exitCode } = await child.wait()
  if (stdout === undefined) return { exitCode, stderr: "", stdout, tooLarge: true }
  return { exitCode, stderr: stderr?.toString("utf8") ?? "", stdout }
}

/**
 * The confined-access outcome shape (`{ kind, segment?, code?, message?, content? }`) for a
 * guest result; the guest's own output never becomes a message.
 */
function outcome(result) {
  if (result.tooLarge) return { kind: "io", message: `file is larger than ${FILE_READ_LIMIT_BYTES} bytes` }
  if (result.exitCode === 0) return { kind: "ok", content: result.stdout }
  if (result.exitCode === PARENT) return { kind: "parent", segment: result.stderr }
  if (result.exitCode === NOT_REGULAR) return { kind: "not-regular" }
  if (result.exitCode === MISSING) return { code: "ENOENT", kind: "io", message: "no such file or directory" }
  return { kind: "io", message: `guest file operation failed with exit code ${result.exitCode}` }
}

/** Atomically replaces `path` (relative to the session root) in the Sandbox guest. */
export async function writeGuestFile(session, path, content, signal) {
  const input = Buffer.from(content, "utf8")
  return outcome(await runGuest(session, WRITE_SCRIPT, [path, randomUUID()], input, signal))
}

/** Reads the regular file `path` (relative to the session root) from the Sandbox guest. */
export async function readGuestFile(session, path, signal) {
  return outcome(await runGuest(session, READ_SCRIPT, [path], undefined, signal))
}
