// Issue 22 item 2 as a figure: 1,000 AML Scripts, then 1,000 application spawns that orphan a
// grandchild (`sh -c "sleep 0.1 & exit 0"`); counts the zombies left under this process.
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"

import { AmlRuntime, Script } from "../../index.js"
import { jsx } from "../../jsx-runtime/index.js"

function zombieChildren() {
  let count = 0
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (state === "Z" && Number(ppid) === process.pid) count++
    } catch {
      // Ended while read.
    }
  }
  return count
}

const appSpawn = () =>
  new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", "sleep 0.1 & exit 0"], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", resolve)
  })

export async function zombies() {
  const runtime = new AmlRuntime()
  const batch = Array.from({ length: 100 }, () => jsx(Script, { command: "true" }))
  for (let i = 0; i < 10; i++) await runtime.evaluate(batch)
  for (let i = 0; i < 1000; i += 50) await Promise.all(Array.from({ length: 50 }, appSpawn))
  // The orphaned sleeps end after 0.1 s; whoever reaps them has had ample time.
  await new Promise((resolve) => setTimeout(resolve, 2000))
  console.log(`  zombies after 1,000 Scripts and 1,000 orphaning app spawns: ${zombieChildren()}`)
}
