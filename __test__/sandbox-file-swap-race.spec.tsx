// Issue 22 item 1: <File> and <Include path> inside a Sandbox against a parent directory
// swapped for a link to outside the root (`renameat2(RENAME_EXCHANGE)` in a loop, from a
// python3 helper). Two paths: a local Sandbox, whose file work runs from the host beneath the
// root with directory descriptors (crates/aml-files/src/confined), and a provider whose
// guest files are not known to be host files, served by the guest script (lib/files/
// guest-file.js: `cd -P` walk checked with `pwd -P`). No attempt may write or read a byte
// outside the root; each either lands inside or is refused with the documented parent error.
// Before, the guest script checked `[ -L ]` and then used the path by name: 464 of 2,000
// reads returned the outside secret.
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { File, Include, Sandbox } from "@aml-jsx/sdk"

import { sandboxRuntime } from "./support/sandbox-paths.js"

const ATTEMPTS = 2_000
const SECRET = "OUTSIDE-SECRET"
const PARENT_REFUSAL = /^<(File|Include)> parent "d" is not a directory$/

const SWAPPER = `
import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
swaps = 0
def stop(*_):
    sys.stdout.write("%d\\n" % swaps)
    sys.stdout.flush()
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
sys.stdout.write("ready\\n")
sys.stdout.flush()
while True:
    if libc.renameat2(-100, a, -100, b, 2) == 0:
        swaps += 1
`

let base: string
let root: string
let outside: string
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "aml-swap-race-"))
  root = join(base, "root")
  outside = join(base, "outside")
  await mkdir(join(root, "d"), { recursive: true })
  await mkdir(outside)
  await writeFile(join(root, "d/secret.txt"), "inside")
  await writeFile(join(outside, "secret.txt"), SECRET)
  await symlink(outside, join(root, "l"))
})
afterEach(async () => {
  await rm(base, { force: true, recursive: true })
})

/** Starts swapping `root/d` and `root/l`; `stop()` resolves with the number of swaps. */
async function startSwapper() {
  const child = spawn("python3", ["-c", SWAPPER, join(root, "d"), join(root, "l")], { stdio: ["ignore", "pipe", "inherit"] })
  let output = ""
  child.stdout.setEncoding("utf8")
  const lines = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (output.includes("ready\n")) resolve()
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`swapper exited early with ${code}`)))
  })
  await lines
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()))
  return {
    async stop() {
      child.kill("SIGTERM")
      await closed
      return Number(output.split("\n")[1])
    },
  }
}


describe.each(["host", "guest"] as const)("%s file path", (path) => {
  test("File writes never land outside the root while a parent is swapped for an outside link", async () => {
    const rt = sandboxRuntime(path, root)
    const swapper = await startSwapper()
    let written = 0
    let refused = 0
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        try {
          await rt.evaluate(<Sandbox access="read-write"><File path={`d/w-${i}.txt`}>payload</File></Sandbox>)
          written++
        } catch (error) {
          // Refused while the link was in place: the documented parent error, nothing else.
          expect((error as Error).message).toMatch(PARENT_REFUSAL)
          refused++
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(0)
    }
    expect(written + refused).toBe(ATTEMPTS)
    // Both sides of the race were met: some attempts saw the directory, some the outside link.
    // A swapper that never swaps, or attempts that never overlap a swap, fail here.
    expect(written).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
    expect(await readdir(outside)).toEqual(["secret.txt"])
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe(SECRET)
  }, 300_000)

  test("Include reads never read outside the root while a parent is swapped for an outside link", async () => {
    const rt = sandboxRuntime(path, root)
    const swapper = await startSwapper()
    let read = 0
    let refused = 0
    let leaked = 0
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        let text: string
        try {
          text = await rt.evaluate(<Sandbox access="read-write"><Include path="d/secret.txt" /></Sandbox>)
        } catch (error) {
          expect((error as Error).message).toMatch(PARENT_REFUSAL)
          refused++
          continue
        }
        read++
        if (text !== "inside") leaked++
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(0)
    }
    // As above: the race was met from both sides, and no read crossed the link.
    expect(read).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
    expect(leaked).toBe(0)
  }, 300_000)
})
