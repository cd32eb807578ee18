// The README's quick start must run as a new user would run it: through a TSX runner,
// resolving "@aml-jsx/sdk" through the package's own exports.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

import { expect, test } from "vitest"

const run = promisify(execFile)
const root = fileURLToPath(new URL("..", import.meta.url))

test("examples/quick-start.tsx runs with tsx and prints its result", async () => {
  const { stdout, stderr } = await run(process.execPath, ["node_modules/tsx/dist/cli.mjs", "examples/quick-start.tsx"], {
    cwd: root,
    timeout: 30_000,
  })
  expect(stdout).toContain("HELLO, AML!")
  expect(stdout).toContain("1. components are functions")
  expect(stderr).toMatch(/\[run [0-9a-f]{8}\] ok/)
})

test("examples/agents.tsx runs with tsx: child Agent result in the parent prompt, follow-up turn", async () => {
  const { stdout } = await run(process.execPath, ["node_modules/tsx/dist/cli.mjs", "examples/agents.tsx"], {
    cwd: root,
    timeout: 30_000,
  })
  expect(stdout).toContain("[Specialist said: [Find the riskiest change] → Now write the summary]")
  expect(stdout).toContain('system of the last call: "Be brief.\\nAnswer as a reviewer."')
})
