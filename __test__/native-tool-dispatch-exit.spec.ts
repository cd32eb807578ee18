// The Tool dispatcher is a weak threadsafe function: a script that evaluates with the
// Rust-native provider (including an abort while an executor never settles) must exit by
// itself, with no lingering threadsafe function, timer or handle.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, it } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const testing = fileURLToPath(new URL("../testing/index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))
const root = fileURLToPath(new URL("..", import.meta.url))

// Success and an abort with a never-settling executor; the script never calls process.exit.
// It runs from the package root, where "zod" resolves.
const script = `
import { z } from "zod"
import { Agent, AmlRuntime, Tool, defineTool } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
import { nativeScriptedProvider } from ${JSON.stringify(testing)}
const slow = defineTool({ name: "slow", description: "Slow", input: z.object({}),
  execute: () => new Promise((resolve) => setTimeout(() => resolve({ done: true }), 20)) })
const stuck = defineTool({ name: "stuck", description: "Stuck", input: z.object({}), execute: () => new Promise(() => {}) })
const tree = jsx(Agent, { children: [jsx(Tool, { use: slow }), jsx(Tool, { use: stuck }), "go"] })
const ok = nativeScriptedProvider({ steps: [{ tool: "slow", input: {} }] })
console.log(await new AmlRuntime({ agentProvider: ok }).evaluate(tree))
const controller = new AbortController()
setTimeout(() => controller.abort(new Error("bye")), 20)
const stopped = nativeScriptedProvider({ steps: [{ tool: "stuck", input: {} }] })
await new AmlRuntime({ agentProvider: stopped }).evaluate(tree, { signal: controller.signal }).catch((e) => console.log(e.cause.message))
`

it("a script that uses the native provider exits by itself", async () => {
  const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  })
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  // Hang guard only: a process kept alive by a leaked handle never exits, so it is killed
  // here and its exit code is not 0. No wall-clock margin (CI machines are loaded).
  const killer = setTimeout(() => child.kill("SIGKILL"), 20_000)
  const code = await new Promise((resolve) => child.on("exit", resolve))
  clearTimeout(killer)
  expect(stdout.trim().split("\n")).toEqual(['{"ok":true,"value":{"done":true}}', "bye"])
  expect(code).toBe(0)
})
