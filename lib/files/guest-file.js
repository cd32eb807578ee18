// Guest-side file access for <File> and <Include path> inside a Sandbox (docs-next "nearest
// active filesystem: Sandbox guest first"). The guest is reached only through the lease's
// SandboxRuntime — never a host path — so the same code serves a local directory, a
// container or a remote VM. The POSIX `sh` scripts below apply the host rules of aml-files (confined) in
// the guest: every parent is checked with `-L`/`-d` (a symlink or non-directory is
// refused, missing ones are created), the destination must be a regular file, and content
// goes to `.aml-file-<uuid>.tmp` (created with noclobber) before `mv` replaces it.

import { randomUUID } from "node:crypto"

const PARENT = 3
const NOT_REGULAR = 4

const WALK = `
target=$1
dir=.
rest=$target
while case $rest in */*) true ;; *) false ;; esac; do
  seg=\${rest%%/*}
  rest=\${rest#*/}
  if [ "$dir" = . ]; then dir=$seg; else dir=$dir/$seg; fi
  if [ -L "$dir" ] || { [ -e "$dir" ] && [ ! -d "$dir" ]; }; then printf '%s' "$dir" >&2; exit ${PARENT}; fi
  [ -d "$dir" ] || [ "$create" != 1 ] || mkdir -- "$dir" || exit 1
done
if [ -L "$target" ] || { [ -e "$target" ] && [ ! -f "$target" ]; }; then exit ${NOT_REGULAR}; fi
`

const WRITE_SCRIPT = `create=1
${WALK}
tmp=$dir/.aml-file-$2.tmp
trap 'rm -f -- "$tmp"' EXIT
(set -C; cat > "$tmp") || exit 1
mv -f -- "$tmp" "$target" || exit 1
trap - EXIT
`

const READ_SCRIPT = `create=0
${WALK}
exec cat -- "$target"
`

async function drain(stream) {
  const reader = stream.getReader()
  const chunks = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
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
  const output = Promise.all([drain(child.stdout), drain(child.stderr)])
  const writer = child.stdin.getWriter()
  try {
    if (input !== undefined && input.byteLength > 0) await writer.write(input)
    await writer.close()
  } catch {
    // The process may exit without reading stdin (a refused parent): its exit code says why.
  }
  const [stdout, stderr] = await output
  const { exitCode } = await child.wait()
  return { exitCode, stderr: stderr.toString("utf8"), stdout }
}

/** The confined-access outcome shape (`{ kind, segment?, message? , content? }`) for a guest result. */
function outcome(result) {
  if (result.exitCode === 0) return { kind: "ok", content: result.stdout }
  if (result.exitCode === PARENT) return { kind: "parent", segment: result.stderr }
  if (result.exitCode === NOT_REGULAR) return { kind: "not-regular" }
  const detail = result.stderr.trim()
  return { kind: "io", message: detail.length > 0 ? detail : `guest command exited with code ${result.exitCode}` }
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
