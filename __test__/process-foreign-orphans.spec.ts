// Issue 22 item 2: running <Script>s must not turn the application's process into a subreaper
// that never reaps. Before, after one Script every orphaned grandchild of the application's
// OWN child_process trees stayed a zombie child of Node until Node exited (1,000 spawns of
// `sh -c "sleep 0.1 & exit 0"` left 1,000 zombies), because orphans of any tree are reparented
// to the nearest subreaper. AML's trees are still fully reaped (by the supervisor process).
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, test } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))

// Runs in a fresh Node so that nothing but this workload has ever spawned from it.
const script = `
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { AmlRuntime, Script } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}

/** [pid, state, ppid] of every process, from /proc. */
function processes() {
  const found = []
  for (const pid of readdirSync("/proc")) {
    if (!/^\\d+$/.test(pid)) continue
    try {
      const stat = readFileSync("/proc/" + pid + "/stat", "latin1")
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      found.push([pid, state, ppid])
    } catch {
      // The process ended while it was being read.
    }
  }
  return found
}

/** Zombies whose parent is this process, and zombies whose parent is one of its children. */
function zombies() {
  const all = processes()
  const me = String(process.pid)
  const children = new Set(all.filter(([, , ppid]) => ppid === me).map(([pid]) => pid))
  return {
    own: all.filter(([, state, ppid]) => state === "Z" && ppid === me).length,
    grandchildren: all.filter(([, state, ppid]) => state === "Z" && children.has(ppid)).length,
  }
}

function appSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", "sleep 0.1 & exit 0"], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", resolve)
  })
}

const runtime = new AmlRuntime()
const batch = Array.from({ length: 100 }, () => jsx(Script, { command: "true" }))
for (let i = 0; i < 10; i++) await runtime.evaluate(batch)
let started = 0
async function worker() {
  while (started < 1000) {
    started++
    await appSpawn()
  }
}
await Promise.all(Array.from({ length: 8 }, worker))
// The orphaned sleeps end 0.1 s after their shell; on a loaded machine it may take far longer,
// so poll up to a generous bound rather than wait a fixed time.
const deadline = Date.now() + 60_000
let count = zombies()
while ((count.own > 0 || count.grandchildren > 0) && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 200))
  count = zombies()
}
console.log(JSON.stringify(count))
process.exit(0)
`

function run(): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout }))
  })
}

test("1,000 Scripts and 1,000 orphan-leaving child_process spawns leave no zombie", { timeout: 180_000 }, async () => {
  const { code, stdout } = await run()
  expect(code).toBe(0)
  expect(JSON.parse(stdout.trim())).toEqual({ own: 0, grandchildren: 0 })
})
