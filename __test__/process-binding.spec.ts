// The process binding's lifecycle rules (src/boundary/async_runtime.rs): an evaluation that spawns
// nothing never starts the process runtime, finished processes let Node exit by itself, and
// a panic in the async bridge becomes a rejected promise. Each scenario runs in a fresh Node
// process, which never calls process.exit.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

import { expect, test } from "vitest"

import { hookLocation, processPanicForTest } from "./support/native-test-hooks.js"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))
const nativeEntry = fileURLToPath(new URL("../lib/core/native.js", import.meta.url))

const prelude = `
import { AmlRuntime, Script, spawnLocalProcess } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
import { processRuntimeStarted } from ${JSON.stringify(nativeEntry)}
const runtime = new AmlRuntime()
`

function runScript(body: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, ["--input-type=module", "--eval", prelude + body], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("error", reject)
    child.on("exit", (code) => {
      clearTimeout(killer)
      resolve({ code, ms: Date.now() - started, stderr, stdout })
    })
  })
}

test("an evaluation that spawns nothing does not start the process runtime", async () => {
  const result = await runScript(`
console.log(await runtime.evaluate(["a", jsx(async () => "b", {})]), processRuntimeStarted())
console.log(await runtime.evaluate(jsx(Script, { command: "true" })) === "", processRuntimeStarted())
`)
  expect(result.stderr).toBe("")
  expect(result.stdout).toBe("ab false\ntrue true\n")
  expect(result.code).toBe(0)
})

test("Node exits by itself after Scripts and local processes finish", async () => {
  const result = await runScript(`
console.log(await runtime.evaluate(jsx(Script, { shell: "sh", children: "echo one" })))
const child = await spawnLocalProcess("sh", ["-c", "echo two"], { cwd: "/", signal: new AbortController().signal })
console.log(await new Response(child.stdout).text(), (await child.wait()).exitCode)
// Neither read nor awaited: its exit must not be waited for by anything that holds Node.
await spawnLocalProcess("true", [], { cwd: "/", signal: new AbortController().signal })
`)
  expect(result.stderr).toBe("")
  expect(result.stdout).toBe("one\n\ntwo\n 0\n")
  expect(result.code).toBe(0)
})

/** "Z" for a zombie, the state letter of a live process, undefined when it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
  } catch {
    return undefined
  }
}

test("a process still running when Node dies does not outlive it", async () => {
  // The leader's parent-death signal (armed by the supervisor) kills it with Node. What is
  // left may be a zombie: reparented to this test process, a subreaper that reaps only the
  // groups it spawned itself.
  const result = await runScript(`
const child = await spawnLocalProcess("sleep", ["30"], { cwd: "/", signal: new AbortController().signal })
console.log(child.id.split(":")[1])
setTimeout(() => process.kill(process.pid, "SIGKILL"), 100)
`)
  const pid = Number(result.stdout.trim())
  expect(pid).toBeGreaterThan(0)
  const deadline = Date.now() + 2_000
  while (processState(pid) !== undefined && processState(pid) !== "Z" && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  expect([undefined, "Z"]).toContain(processState(pid))
})

test("a panic in the async process bridge rejects the promise", async () => {
  const error = await processPanicForTest().then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(Error)
  expect((error as Error).message).toBe(
    `AML engine panicked: async process panic ${hookLocation('panic!("async process panic")')}`,
  )
})
