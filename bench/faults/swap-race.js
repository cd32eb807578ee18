// Issue 22 item 1 as figures: a parent directory swapped with a link to outside the root in a
// tight `renameat2(RENAME_EXCHANGE)` loop while <File> writes and <Include> reads run inside a
// Sandbox, on the host path (local Sandbox) and the guest-script path. Counts what escaped.
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { AmlRuntime, defineSandboxProvider, File, Include, localSandbox, Sandbox } from "../../index.js"
import { jsx } from "../../jsx-runtime/index.js"

const ATTEMPTS = 2_000
const SWAPPER = `
import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("ready", flush=True)
while True:
    libc.renameat2(-100, a, -100, b, 2)
`

async function swapping(root) {
  const child = spawn("python3", ["-c", SWAPPER, join(root, "d"), join(root, "l")], { stdio: ["ignore", "pipe", "inherit"] })
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => String(chunk).includes("ready") && resolve())
    child.on("exit", (code) => reject(new Error(`swapper exited with ${code}`)))
  })
  return () => new Promise((resolve) => (child.on("close", resolve), child.kill("SIGTERM")))
}

function runtimeFor(path, root) {
  const local = localSandbox({ workspace: root })
  if (path === "host") return new AmlRuntime({ sandboxProvider: local })
  const wrapped = defineSandboxProvider({
    name: "wrapped-local",
    async acquire(request) {
      const lease = await local.acquire(request)
      return { handle: {}, id: lease.id, release: () => lease.release(), runtime: lease.runtime }
    },
  })
  return new AmlRuntime({ sandboxProvider: wrapped })
}

async function race(path, sink) {
  const base = await mkdtemp(join(tmpdir(), "aml-fault-swap-"))
  const root = join(base, "root")
  const outside = join(base, "outside")
  try {
    await mkdir(join(root, "d"), { recursive: true })
    await mkdir(outside)
    await writeFile(join(root, "d/secret.txt"), "inside")
    await writeFile(join(outside, "secret.txt"), "OUTSIDE")
    await symlink(outside, join(root, "l"))
    const rt = runtimeFor(path, root)
    const stop = await swapping(root)
    let done = 0
    let refused = 0
    let leaked = 0
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const child =
          sink === "File" ? jsx(File, { path: `d/w-${i}.txt`, children: "payload" }) : jsx(Include, { path: "d/secret.txt" })
        try {
          const text = await rt.evaluate(jsx(Sandbox, { access: "read-write", children: child }))
          done++
          if (sink === "Include" && text !== "inside") leaked++
        } catch {
          refused++
        }
      }
    } finally {
      await stop()
    }
    const written = (await readdir(outside)).length - 1
    const changed = (await readFile(join(outside, "secret.txt"), "utf8")) !== "OUTSIDE"
    const escapes = sink === "File" ? written + (changed ? 1 : 0) : leaked
    console.log(`  swap race ${path} path, <${sink}> ×${ATTEMPTS}: ${done} done, ${refused} refused, ${escapes} outside the root`)
  } finally {
    await rm(base, { force: true, recursive: true })
  }
}

export async function swapRace() {
  for (const path of ["host", "guest"]) for (const sink of ["File", "Include"]) await race(path, sink)
}
