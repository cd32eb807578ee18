// Issue 22 item 4 as figures: 100 rounds of a filesystemWorkspace lock holder (a child Node)
// SIGKILLed, then one acquisition on this machine. Reports how long after the holder's death
// the takeover succeeded (median and worst), and whether a live holder ever lost its lock.
import { spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { WorkspaceConflictError, filesystemWorkspace } from "../../index.js"

const ROUNDS = 100
const sdk = fileURLToPath(new URL("../../index.js", import.meta.url))
const request = (id) => ({ evaluationId: "bench", id, signal: new AbortController().signal })

function holder(directory, id) {
  const script = `
    const { filesystemWorkspace } = await import(${JSON.stringify(sdk)})
    await filesystemWorkspace({ directory: ${JSON.stringify(directory)} }).acquire({ evaluationId: "child", id: ${JSON.stringify(id)}, signal: new AbortController().signal })
    process.stdout.write("held\\n")
    setInterval(() => {}, 60_000)
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] })
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => String(chunk).includes("held") && resolve(child))
    child.on("exit", (code) => reject(new Error(`holder exited (${code}) before holding`)))
  })
}

export async function takeover() {
  const directory = await mkdtemp(join(tmpdir(), "aml-fault-takeover-"))
  const times = []
  let excluded = 0
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const child = await holder(directory, "w")
      try {
        await filesystemWorkspace({ directory }).acquire(request("w"))
      } catch (error) {
        if (WorkspaceConflictError.is(error, "w")) excluded++
      }
      const exited = new Promise((resolve) => child.on("exit", resolve))
      child.kill("SIGKILL")
      await exited
      const started = performance.now()
      const lease = await filesystemWorkspace({ directory }).acquire(request("w"))
      times.push(performance.now() - started)
      await lease.release()
    }
  } finally {
    await rm(directory, { force: true, recursive: true })
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]
  console.log(
    `  lock takeover after SIGKILL ×${ROUNDS}: median ${median.toFixed(1)} ms, worst ${times.at(-1).toFixed(1)} ms; live holder excluded ${excluded}/${ROUNDS}`,
  )
}
