// Runs the real `aml` executable on a pseudo-terminal (pty-relay.py, python3's pty module),
// the way a person at a terminal runs it: stdout and stderr are both the terminal, so what
// the test reads is the screen's byte stream, ANSI sequences and all, stdout and stderr merged.
import { spawn, type ChildProcess } from "node:child_process"
import { join } from "node:path"

import { amlBin, repoRoot } from "./cli.js"

const relay = join(repoRoot, "__test__/support/pty-relay.py")

export type PtyResult = { code: number | null; output: string }

export type PtyProcess = {
  child: ChildProcess
  /** Resolves once the terminal output contains `text` (rejects if the process ends first). */
  waitFor(text: string): Promise<void>
  done: Promise<PtyResult>
}

/** Starts `aml <args>` on a `cols`×`rows` terminal (120×40 unless given). */
export function startCliInPty(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; cols?: number; rows?: number } = {},
): PtyProcess {
  const env: Record<string, string | undefined> = { ...process.env, TERM: "xterm-256color" }
  // As in support/cli.ts: the test runner's own variables are not a user's.
  for (const name of ["NODE_ENV", "MODE", "DEV", "PROD", "SSR", "BASE_URL"]) delete env[name]
  const child = spawn("python3", [relay, String(options.cols ?? 120), String(options.rows ?? 40), process.execPath, amlBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    // Not recorded unless a spec asks (as support/cli.ts): no .aml/runs left in the repository.
    env: { ...env, AML_RECORD: "0", ...options.env },
    stdio: ["ignore", "pipe", "inherit"],
  })
  let output = ""
  const waiters: { text: string; resolve: () => void }[] = []
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk
    for (const waiter of waiters.filter((w) => output.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  })
  // Hang guard only: a healthy run ends long before it.
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000)
  const done = new Promise<PtyResult>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(guard)
      resolve({ code, output })
    })
  })
  return {
    child,
    done,
    waitFor(text) {
      if (output.includes(text)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        waiters.push({ text, resolve })
        done.then((result) => reject(new Error(`aml ended before showing ${JSON.stringify(text)}:\n${result.output}`)))
      })
    },
  }
}
