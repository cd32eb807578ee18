// `npx aml` in a clone runs the clone's own command at once (issue 25 §1): npx finds
// node_modules/.bin/aml (scripts/link-bin.js) and installs nothing into its cache. Had the
// repository's manifest an `aml` bin, npx would install the checkout into <cache>/_npx and run
// its `prepare` (a release build) first; `ignore-scripts` below keeps a regression from starting
// that build inside the test, and the empty cache shows the install all the same.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, expect, test } from "vitest"

const repo = fileURLToPath(new URL("..", import.meta.url))
const cache = mkdtempSync(join(tmpdir(), "aml-npx-cache-"))
const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))

afterAll(() => rmSync(cache, { force: true, recursive: true }))

function npx(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Only this test's npm settings: the npm_* variables of a surrounding `npm test` would
    // otherwise describe the run (npm_command=test, npm_lifecycle_event, …) to the inner npx.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
    Object.assign(env, { npm_config_cache: cache, npm_config_ignore_scripts: "true", npm_config_yes: "false", npm_config_update_notifier: "false" })
    const child = spawn(process.platform === "win32" ? "npx.cmd" : "npx", args, { cwd: repo, env, shell: process.platform === "win32" })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })
}

test("the repository's manifest names no `aml` bin, and the link points at bin/aml.js", () => {
  // A bare path: npm names it after the package (`sdk`), so npx does not treat the checkout
  // as the package that provides `aml`.
  expect(manifest.bin).toBe("bin/aml.js")
  const link = join(repo, "node_modules", ".bin", "aml")
  expect(existsSync(link)).toBe(true)
  expect(realpathSync(link).endsWith(join("bin", "aml.js"))).toBe(true)
})

test("`npx aml --version` in the checkout runs node_modules/.bin/aml without installing into the npx cache", async () => {
  const result = await npx(["aml", "--version"])
  expect(result.stderr).toBe("")
  expect(result.stdout).toBe(`aml/${manifest.version} ${process.platform}-${process.arch} node-${process.version}\n`)
  expect(result.status).toBe(0)
  // npx installs into <cache>/_npx; only npm's own log directory may appear.
  expect(readdirSync(cache).filter((entry) => entry !== "_logs")).toEqual([])
}, 60_000)
