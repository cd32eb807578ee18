// examples/otel.tsx runs with tsx and prints the exported span tree.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

import { expect, test } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))

test("examples/otel.tsx prints the OTel span tree of one evaluation", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["node_modules/tsx/dist/cli.mjs", "examples/otel.tsx"], { cwd: root })
  expect(stdout).toBe(
    [
      'forecast: {"city":"Oslo","sky":"clear"}',
      "handle request",
      "  aml.evaluate",
      "    component Planner",
      "      fetch calendar",
      "      invoke_agent Planner [invoke_agent]",
      "        execute_tool forecast [execute_tool]",
      "",
    ].join("\n"),
  )
})
