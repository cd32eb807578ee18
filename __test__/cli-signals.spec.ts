// Interrupting `aml run` (cli.mdx "Interrupting a run", cli-process-safety.mdx): the signal
// aborts the run with `aml run interrupted by SIG…`, cleanup reaps the process tree, the
// exit status is 130/143, stdout stays empty, and a second signal exits at once.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "vitest"

import { fixture, startCli } from "./support/cli.js"
import { expectAllGoneNow, readPidFile, tempDir } from "./support/processes.js"

/** Every live process whose parent chain reaches `root` (read from /proc). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(join("/proc", entry, "stat"), "utf8")
      // Field 4 (ppid) follows the parenthesised command name, which may contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      parents.set(Number(entry), ppid)
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = []
  for (const pid of parents.keys()) {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (parent === root) {
        found.push(pid)
        break
      }
    }
  }
  return found
}

describe.each([
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)("%s", (signal, code) => {
  it(`aborts the run with "aml run interrupted by ${signal}" and exits ${code} with empty stdout`, async () => {
    const cli = startCli(["run", fixture("wait-for-abort.tsx")])
    await cli.waitForStderr("fixture: provider started")
    cli.child.kill(signal)
    const result = await cli.done
    expect(result).toMatchObject({ code, signal: null, stdout: "" })
    expect(result.stderr).toContain(`fixture: aborted with "aml run interrupted by ${signal}"\n`)
    expect(result.stderr).toMatch(/aml: finished run [0-9a-f-]{36} \(error\) in \d+(\.\d)?ms\n/)
    expect(result.stderr.endsWith(`aml: aml run interrupted by ${signal}\n`)).toBe(true)
  })

  it("reaps the Script's whole process tree before exiting (examples/cli-process-safety.tsx)", async () => {
    const dir = tempDir("aml-cli-safety-")
    try {
      const pidFile = join(dir.path, "child.pid")
      const cli = startCli(["run", "examples/cli-process-safety.tsx", "--trace"], {
        env: { AML_PROCESS_SAFETY_PID_FILE: pidFile },
      })
      const [sleepPid] = await readPidFile(pidFile, 1, 30_000)
      const tree = descendants(cli.child.pid!)
      expect(tree).toContain(sleepPid)
      expect(tree.length).toBeGreaterThanOrEqual(2) // the shell and its sleep
      cli.child.kill(signal)
      const result = await cli.done
      expect(result).toMatchObject({ code, stdout: "" })
      expect(result.stderr).toContain("✗ script Script")
      expect(result.stderr).toContain("✗ sandbox Sandbox")
      expect(result.stderr.endsWith(`aml: aml run interrupted by ${signal}\n`)).toBe(true)
      // Neither alive nor left as a zombie: the supervisor reaped them before the CLI exited.
      expectAllGoneNow(tree)
    } finally {
      dir.remove()
    }
  })
})

describe("bounded cleanup", () => {
  it("exits with the first signal's status when cleanup has not settled after 10 s", async () => {
    const cli = startCli(["run", fixture("stuck-release.tsx")])
    await cli.waitForStderr("fixture: running")
    cli.child.kill("SIGTERM")
    await cli.waitForStderr("fixture: release started")
    const result = await cli.done
    // The run never finished (no finish event, no diagnostic): the deadline ended it.
    expect(result).toMatchObject({ code: 143, signal: null, stdout: "" })
    expect(result.stderr).not.toContain("aml: finished run")
    expect(result.stderr).not.toContain("interrupted")
  }, 40_000)
})

describe("a second signal", () => {
  it("exits at once with that signal's status while cleanup is still running", async () => {
    const cli = startCli(["run", fixture("ignore-abort.tsx")])
    await cli.waitForStderr("fixture: provider started")
    cli.child.kill("SIGINT")
    await cli.waitForStderr("fixture: abort ignored")
    cli.child.kill("SIGTERM")
    const result = await cli.done
    // 143, not 130: the graceful path (the provider is abandoned 10 s after the abort)
    // would have ended with the first signal's status.
    expect(result).toMatchObject({ code: 143, signal: null, stdout: "" })
    expect(result.stderr).not.toContain("aml: finished run")
  })
})
