// A consumer's project as the package test sets it up: an environment without the
// repository's npm and cargo variables or any Rust tool on the PATH, a Node.js of choice first
// on the PATH (npm, npx and every tool's `#!/usr/bin/env node` then run on it), and the
// processes it runs. Used by package-install.spec.ts and consumer-project.spec.ts.
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"

// npm settings the consumer's install may keep from the surrounding `npm test`; everything
// else npm put in the environment (lifecycle, package and prefix variables) describes the
// repository and must not leak into the fresh project.
const KEPT_NPM_CONFIG = new Set(["cache", "registry", "userconfig", "globalconfig", "proxy", "https_proxy", "noproxy", "cafile", "strict_ssl"])

/** PATH without any directory holding cargo, rustc or rustup. */
function pathWithoutRust(path: string): string {
  const tools = ["cargo", "rustc", "rustup"].flatMap((tool) => [tool, `${tool}.exe`])
  return path
    .split(delimiter)
    .filter((dir) => dir !== "" && !tools.some((tool) => existsSync(join(dir, tool))))
    .join(delimiter)
}

/** The consumer's environment, with `node` (an executable path) first on the PATH. */
export function consumerEnv(node: string = process.execPath): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase()
    if (/^(cargo|rustup|rustc|rust_)/.test(lower)) continue
    if (lower.startsWith("npm_") && !(lower.startsWith("npm_config_") && KEPT_NPM_CONFIG.has(lower.slice(11)))) continue
    if (lower === "init_cwd" || lower === "node_options" || lower.startsWith("vitest")) continue
    env[key] = value
  }
  // npm itself stays the one on the PATH; its `#!/usr/bin/env node` finds `node` first. (The
  // consumer spec checks `node --version` there: a Node directory that held cargo is dropped.)
  env.PATH = pathWithoutRust([dirname(node), process.env.PATH ?? ""].join(delimiter))
  return env
}

export interface Outcome {
  status: number | null
  stdout: string
  stderr: string
  error?: NodeJS.ErrnoException
}

// Asynchronous: a vitest worker whose event loop is blocked for long loses its runner RPC.
export function run(cwd: string, env: NodeJS.ProcessEnv, command: string, args: readonly string[], timeout = 180_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, shell: process.platform === "win32", timeout })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => resolve({ error, status: null, stderr, stdout }))
    child.on("close", (status) => resolve({ status, stderr, stdout }))
  })
}

/** Runs a program and fails with its output unless it exits 0; returns its stdout. */
export async function runOk(cwd: string, env: NodeJS.ProcessEnv, command: string, args: readonly string[], timeout?: number): Promise<string> {
  const result = await run(cwd, env, command, args, timeout)
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

export const npmCommand = process.platform === "win32" ? "npm.cmd" : "npm"

/** A binary of a project (node_modules/.bin). */
export const projectBin = (project: string, name: string): string =>
  join(project, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name)

/** The packages npm's `EBADENGINE` warnings in `log` name, without their versions. */
export function badEnginePackages(log: string): string[] {
  const names = [...log.matchAll(/EBADENGINE\s+package: '((?:@[^/']+\/)?[^@']+)@[^']*'/g)].map((match) => match[1]!)
  return [...new Set(names)].sort()
}

/** `name` and every package it depends on (dependencies and installed optional ones) in `project`. */
export function dependencyClosure(project: string, name: string): string[] {
  const seen = new Set<string>()
  const visit = (dependency: string) => {
    if (seen.has(dependency)) return
    const manifestPath = join(project, "node_modules", ...dependency.split("/"), "package.json")
    if (!existsSync(manifestPath)) return
    seen.add(dependency)
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
    for (const next of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(next)
  }
  visit(name)
  return [...seen].sort()
}
