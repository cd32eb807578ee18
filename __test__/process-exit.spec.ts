// A finished evaluation must let Node exit by itself: no lingering threadsafe function,
// timer or handle. The script below never calls process.exit.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, test } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))

const script = `
import { AmlRuntime, evaluate } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
async function Inner() { await new Promise((r) => setTimeout(r, 5)); return "inner" }
async function Outer() { const a = await evaluate(jsx(Inner, {})); return ["outer:", a] }
const runtime = new AmlRuntime({ trace: () => {} })
runtime.on("finish", () => {})
console.log(await runtime.evaluate(jsx(Outer, {})))
`

function runScript(): Promise<{ code: number | null; stdout: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    // Hang guard only (no wall-clock margin): a process held alive is killed, code null.
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("error", reject)
    child.on("exit", (code) => {
      clearTimeout(killer)
      resolve({ code, ms: Date.now() - started, stdout })
    })
  })
}

test("a script that evaluates a tree exits by itself", async () => {
  const { code, stdout } = await runScript()
  expect(stdout.trim()).toBe("outer:inner")
  expect(code).toBe(0)
})
