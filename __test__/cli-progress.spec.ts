// `aml run`'s progress display (docs/CLI.md "Progress"). On a terminal (a pseudo-terminal
// here) stderr shows what is running — the Agent, then the Sandbox and its Script, each
// with its elapsed time — redrawn in place, then a summary on the finish line. Every step
// of the fixture is held until the test saw it on screen (fixtures/cli/progress.tsx), so
// nothing depends on timing. Through pipes, with --quiet and with --json there is no display.
import { writeFileSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "vitest"

import { fixture, startCli } from "./support/cli.js"
import { tempDir } from "./support/processes.js"
import { startCliInPty } from "./support/pty.js"

const workflow = fixture("progress.tsx")
const ESC = "\x1b"
// An elapsed time as the display writes it (0.4s, 12s, 3m05s): the test asserts its shape, not its value.
const ELAPSED = String.raw`(?:\d+\.\ds|\d+s|\d+m\d\ds)`

/** The screen's lines once every redraw is applied: what a person sees when the run ended. */
function finalScreen(output: string): string[] {
  const screen: string[] = []
  let row = 0
  // The display only ever moves up (ESC[nA), clears to the end (ESC[J) and writes lines.
  for (const token of output.replace(/\r\n/g, "\n").split(/(\x1b\[\d*[AJ]|\n|\r)/)) {
    if (token === "\n") row++
    else if (token === "\r" || token === "") continue
    else if (/^\x1b\[\d*A$/.test(token)) row -= Number(token.slice(2, -1) || 1)
    else if (token === `${ESC}[J`) screen.length = row
    else screen[row] = (screen[row] ?? "") + token
  }
  return screen.slice(0, row).map((line) => line ?? "")
}

describe("on a terminal", () => {
  it("shows the running Agent, then the Sandbox and Script, with elapsed times, and a summary at the end", async () => {
    const dir = tempDir("aml-cli-progress-")
    try {
      const cli = startCliInPty(["run", workflow], { env: { AML_PROGRESS_DIR: dir.path } })
      // Each step ends only once its row was on screen.
      await cli.waitFor("Agent span-1")
      writeFileSync(join(dir.path, "agent-go"), "")
      await cli.waitFor("Script · sh")
      writeFileSync(join(dir.path, "script-go"), "")
      const { code, output } = await cli.done
      expect(code).toBe(0)
      const text = output.replace(/\r\n/g, "\n")

      // The block: a header with the run's elapsed time and one row per running step.
      expect(text).toMatch(new RegExp(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] aml: running ${ELAPSED}\n`))
      expect(text).toMatch(new RegExp(`\n {2} +${ELAPSED} {2}Agent span-1\n`))
      expect(text).toMatch(new RegExp(`\n {2} +${ELAPSED} {2}Sandbox\n {2} +${ELAPSED} {2}Script · sh\n`))
      // Redrawn in place: moved up over the block and cleared, not appended.
      expect(text).toContain(`\r${ESC}[2A${ESC}[J`)

      // When it is over nothing of the block is left, the cursor is at a line start, and the
      // finish line carries the summary.
      const screen = finalScreen(output)
      expect(screen).toEqual([
        expect.stringMatching(/^aml: starting run [0-9a-f-]{36} for .*progress\.tsx$/),
        "fixture: waiting for agent-go",
        expect.stringMatching(/^aml: finished run [0-9a-f-]{36} \(ok\) in \d+(\.\d)?ms — 1 Agent, 1 Script, 1 Sandbox$/),
        "drafted checked",
      ])
      expect(text.endsWith("drafted checked\n")).toBe(true)
    } finally {
      dir.remove()
    }
  })

  it("an interrupted run clears the block before its last lines and leaves the cursor at a line start", async () => {
    const cli = startCliInPty(["run", fixture("wait-for-abort.tsx")])
    await cli.waitFor("Agent span-1")
    cli.child.kill("SIGINT")
    const { code, output } = await cli.done
    expect(code).toBe(130)
    const screen = finalScreen(output)
    expect(screen.at(-1)).toBe("aml: aml run interrupted by SIGINT")
    expect(screen.at(-2)).toMatch(/^aml: finished run [0-9a-f-]{36} \(error\) in \d+(\.\d)?ms — 1 Agent \(1 failed\)$/)
    expect(screen.join("\n")).not.toContain("aml: running")
    expect(output.endsWith("\r\n")).toBe(true)
  })

  // Both steps released as soon as the Agent waits: with the display on, its header would be
  // on screen by then (it is drawn when the evaluation starts, before any step).
  async function runReleased(args: string[], env: Record<string, string> = {}) {
    const dir = tempDir("aml-cli-progress-")
    try {
      const cli = startCliInPty(["run", workflow, ...args], { env: { AML_PROGRESS_DIR: dir.path, ...env } })
      await cli.waitFor("fixture: waiting for agent-go")
      writeFileSync(join(dir.path, "script-go"), "")
      writeFileSync(join(dir.path, "agent-go"), "")
      return await cli.done
    } finally {
      dir.remove()
    }
  }

  it("draws the header before the first step (the control for the cases below)", async () => {
    const { code, output } = await runReleased([])
    expect(code).toBe(0)
    const header = output.indexOf("aml: running")
    expect(header).toBeGreaterThan(-1)
    expect(header).toBeLessThan(output.indexOf("fixture: waiting for agent-go"))
  })

  it("--quiet: no display and no run lines, only the result", async () => {
    const { code, output } = await runReleased(["--quiet"])
    expect(code).toBe(0)
    expect(output).not.toContain(ESC)
    expect(output.replace(/\r\n/g, "\n")).toBe("fixture: waiting for agent-go\ndrafted checked\n")
  })

  it("TERM=dumb: no display (no cursor movement there)", async () => {
    const { code, output } = await runReleased([], { TERM: "dumb" })
    expect(code).toBe(0)
    expect(output).not.toContain(ESC)
    expect(output).not.toContain("aml: running")
  })

  it("--json: no display; the run lines as in a pipe", async () => {
    const { code, output } = await runReleased(["--json"])
    expect(code).toBe(0)
    expect(output).not.toContain(ESC)
    expect(output).not.toContain("aml: running")
    const text = output.replace(/\r\n/g, "\n")
    expect(text).toMatch(/aml: finished run [0-9a-f-]{36} \(ok\) in \d+(\.\d)?ms\n/)
    expect(text).toContain('"result": "drafted checked"')
  })
})

describe("through pipes", () => {
  it("prints only the run lines, exactly as without a display", async () => {
    const dir = tempDir("aml-cli-progress-")
    try {
      const cli = startCli(["run", workflow], { env: { AML_PROGRESS_DIR: dir.path } })
      await cli.waitForStderr("fixture: waiting for agent-go")
      writeFileSync(join(dir.path, "script-go"), "")
      writeFileSync(join(dir.path, "agent-go"), "")
      const result = await cli.done
      expect(result).toMatchObject({ code: 0, stdout: "drafted checked\n" })
      expect(result.stderr).toMatch(
        /^aml: starting run ([0-9a-f-]{36}) for .*progress\.tsx\nfixture: waiting for agent-go\naml: finished run \1 \(ok\) in \d+(\.\d)?ms\n$/,
      )
    } finally {
      dir.remove()
    }
  })
})
