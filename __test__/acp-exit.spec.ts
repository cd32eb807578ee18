// A script that runs an ACP Agent (with a JS Tool served by the MCP bridge, and an aborted
// run) must exit by itself: no session, bridge, threadsafe function or handle keeps Node
// alive once the evaluations settled.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, it } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))
const agent = fileURLToPath(new URL("./fixtures/acp-scripted-agent.mjs", import.meta.url))
const root = fileURLToPath(new URL("..", import.meta.url))

const script = `
import { z } from "zod"
import { Agent, AmlRuntime, Tool, defineAcpAgentProvider, defineTool } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
const add = defineTool({ name: "add", description: "Add", input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => ({ sum: a + b }) })
const provider = defineAcpAgentProvider({
  name: "exit-check",
  workingDirectory: undefined,
  createLaunch: () => ({ command: process.execPath, args: [${JSON.stringify(agent)}], env: { AML_TEST_MCP_HTTP: "1" }, permissionPolicy: "reject_once" }),
})
const runtime = new AmlRuntime({ agentProvider: provider })
console.log(await runtime.evaluate(jsx(Agent, { children: [jsx(Tool, { use: add }), 'call-tool add {"a":1,"b":2}'] })))
const controller = new AbortController()
const pending = runtime.evaluate(jsx(Agent, { children: "honour-cancel" }), { signal: controller.signal })
setTimeout(() => controller.abort(new Error("bye")), 500)
console.log(await pending.catch((e) => e.cause.message))
`

it("a script that runs an ACP Agent exits by itself", async () => {
  const child = spawn(process.execPath, ["--input-type=module", "--eval", script], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  const code = await new Promise((resolve) => child.on("exit", resolve))
  expect(code).toBe(0)
  const [first, second] = stdout.trim().split("\n")
  expect(JSON.parse(first).result).toEqual({ content: [{ text: '{"sum":3}', type: "text" }] })
  expect(second).toBe("bye")
}, 60_000)
