// A panic on the addon's way into Rust becomes a rejected promise, never an abort: here the
// process runtime's threads cannot start (the child's pids cgroup is full, or, for a
// non-root user, RLIMIT_NPROC), and spawnLocalProcess must reject with the panic's text.
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, rmdirSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

import { expect, it } from "vitest"

const SDK = new URL("../index.js", import.meta.url).href
const PIDS = "/sys/fs/cgroup/pids"

const CHILD = `
const { spawnLocalProcess } = await import(${JSON.stringify(SDK)})
process.stdout.write("ready\\n")
process.stdin.once("data", async () => {
  try {
    await spawnLocalProcess("true", [], { cwd: "/", signal: new AbortController().signal })
    process.stdout.write("spawned\\n")
  } catch (error) {
    process.stdout.write("rejected: " + error.message.split("\\n")[0] + "\\n")
  }
  process.exit(0)
})
`

/** Caps `pid` at the threads it has now; returns the undo. */
function capThreads(pid: number): () => void {
  const threads = readdirSync(`/proc/${pid}/task`).length
  if (process.getuid?.() === 0) {
    const group = `${PIDS}/aml-panic-test-${pid}`
    mkdirSync(group)
    writeFileSync(`${group}/pids.max`, String(threads))
    writeFileSync(`${group}/cgroup.procs`, String(pid))
    return () => {
      try {
        writeFileSync(`${PIDS}/cgroup.procs`, String(pid))
      } catch {}
      rmdirSync(group)
    }
  }
  const result = spawnSync("prlimit", [`--pid=${pid}`, "--nproc=1:1"])
  if (result.status !== 0) throw new Error(`prlimit failed: ${result.stderr}`)
  return () => {}
}

it("rejects, instead of aborting Node, when the process runtime's threads cannot start", async () => {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdio: ["pipe", "pipe", "pipe"],
  })
  let stdout = ""
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | string | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)))
  await new Promise<void>((resolve) =>
    child.stdout.on("data", (chunk) => {
      stdout += chunk
      if (stdout.includes("ready\n")) resolve()
    }),
  )
  const undo = capThreads(child.pid!)
  try {
    child.stdin.write("go\n")
    expect(await exited).toBe(0)
  } finally {
    undo()
  }
  expect(stdout).toMatch(/^ready\nrejected: AML engine panicked: /)
  // The chained default hook reported the panic on stderr, once.
  expect(stderr.match(/panicked at/g)?.length).toBe(1)
})
