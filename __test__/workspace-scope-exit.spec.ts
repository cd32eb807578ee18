// Node exits by itself after an evaluation that wrote and read files through the native
// confined file operations (src/files/confined.rs): nothing the binding keeps holds the event loop.
// The script never calls process.exit; the 20 s kill is only a hang guard.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, test } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))

const script = `
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AmlRuntime, File, Include, Workspace } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
const directory = await mkdtemp(join(tmpdir(), "aml-exit-"))
const provider = {
  name: "dir",
  acquire: async () => ({ directory, handle: null, id: "l", save: async () => {}, release: async () => {} }),
}
const runtime = new AmlRuntime({ workspaceProvider: provider })
const tree = jsx(Workspace, { children: [jsx(File, { path: "a/b.txt", children: "written" }), jsx(Include, { path: "a/b.txt" })] })
console.log(await runtime.evaluate(tree))
await rm(directory, { recursive: true })
`

test("a script that writes and includes files exits by itself", async () => {
  const result = await new Promise<{ code: number | null; signal: string | null; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "--eval", script], { stdio: ["ignore", "pipe", "inherit"] })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout })
    })
  })
  expect(result.stdout.trim()).toBe("written")
  expect(result.signal).toBeNull()
  expect(result.code).toBe(0)
})
