// package-lock.json stays usable by `npm ci` on a fresh clone (issue 25 §6): the static check of
// scripts/check-lock.js, and npm's own verdict (`npm ci --dry-run`, which validates the lock
// against package.json before touching anything) on a copy of the two manifests.
import { spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, describe, expect, test } from "vitest"

// @ts-ignore -- a plain JS module of the repository's scripts
import { missingLockEntries } from "../scripts/check-lock.js"

const repo = fileURLToPath(new URL("..", import.meta.url))
const lock = JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8"))
const scratch = mkdtempSync(join(tmpdir(), "aml-lock-"))

afterAll(() => rmSync(scratch, { force: true, recursive: true }))

function npm(args: readonly string[], cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // npm_* variables of a surrounding `npm test` describe the repository; drop them.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(?!config_(cache|registry|userconfig)$)/i.test(key)))
    const child = spawn(process.platform === "win32" ? "npm.cmd" : "npm", args, { cwd, env, shell: process.platform === "win32" })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, output }))
  })
}

describe("package-lock.json", () => {
  test("has an entry for every dependency and optional platform package of every locked package", () => {
    expect(missingLockEntries(lock)).toEqual([])
  })

  test("the check sees a dropped optional platform package", () => {
    const { ["node_modules/opencode-linux-x64"]: _dropped, ...packages } = lock.packages
    expect(missingLockEntries({ ...lock, packages })).toContain("opencode-linux-x64 (wanted by node_modules/opencode-ai)")
  })

  test("npm ci accepts it (dry run on a copy of the manifests)", async () => {
    copyFileSync(join(repo, "package.json"), join(scratch, "package.json"))
    copyFileSync(join(repo, "package-lock.json"), join(scratch, "package-lock.json"))
    const result = await npm(["ci", "--dry-run", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], scratch)
    expect(result.output).not.toContain("Missing:")
    expect(result.status, result.output).toBe(0)
  }, 120_000)
})

// npm 11 lists dependencies whose install scripts `allowScripts` does not cover, at the end of
// every install; docs/CONTRIBUTING.md ("What `npm install` prints") gives the reason for each
// entry. A new dependency with an install script fails here until it is reviewed and listed.
describe("allowScripts in package.json", () => {
  test("covers every installed dependency that has an install script", async () => {
    const result = await npm(["install-scripts", "ls"], repo)
    expect(result.status, result.output).toBe(0)
    expect(result.output.trim()).toBe("No packages with unreviewed install scripts.")
  }, 120_000)
})
