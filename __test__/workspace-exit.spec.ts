// Workspace persistence keeps nothing alive: a script that saves through the native store and
// a JS adapter (the weak storage dispatcher), and holds a local lock it never releases (the
// refresh timer lives on the addon's runtime), exits by itself.
import { spawn } from "node:child_process"
import { mkdtempSync, mkdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, expect, it } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const testing = fileURLToPath(new URL("../testing/index.js", import.meta.url))
const root = mkdtempSync(join(tmpdir(), "aml-ws-exit-"))
mkdirSync(join(root, "local"))

afterAll(() => rmSync(root, { recursive: true, force: true }))

const script = `
import { writeFileSync } from "node:fs"
import { createPersistentWorkspaceProvider, filesystemWorkspace, localWorkspace } from ${JSON.stringify(entry)}
import { InMemoryWorkspaceStorageAdapter } from ${JSON.stringify(testing)}
const signal = new AbortController().signal
const request = { evaluationId: "e", id: "exit", signal }
const save = { exclude: [], gitignore: true, outcome: "success", retention: 1, signal }
for (const provider of [
  filesystemWorkspace({ directory: ${JSON.stringify(join(root, "store"))}, temporaryDirectory: ${JSON.stringify(root)} }),
  createPersistentWorkspaceProvider({ storage: new InMemoryWorkspaceStorageAdapter(), format: "folder", temporaryDirectory: ${JSON.stringify(root)} }),
]) {
  const lease = await provider.acquire(request)
  writeFileSync(lease.directory + "/f", "x")
  await lease.save(save)
  await lease.release()
}
const held = await localWorkspace({ directory: ${JSON.stringify(join(root, "local"))} }).acquire(request)
console.log("held " + held.id.startsWith("local-"))
`

it("a script using the Workspace stores exits by itself", async () => {
  const child = spawn(process.execPath, ["--input-type=module", "--eval", script], { stdio: ["ignore", "pipe", "inherit"] })
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  // Generous hang guard only: the assertion is that it exits, not how fast.
  const code = await new Promise<number | null>((resolve) => {
    const guard = setTimeout(() => {
      child.kill("SIGKILL")
      resolve(-1)
    }, 15_000)
    child.on("exit", (exitCode) => {
      clearTimeout(guard)
      resolve(exitCode)
    })
  })
  expect(code).toBe(0)
  expect(stdout.trim()).toBe("held true")
})
