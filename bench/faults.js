// `npm run bench -- faults`: the fault probes of issue 22 as figures (counts, not speed).
// Not in the default set: it takes a few minutes and needs python3.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { swapRace } from "./faults/swap-race.js"
import { takeover } from "./faults/takeover.js"
import { zombies } from "./faults/zombies.js"

export async function faultBenchmarks() {
  console.log("faults")
  await swapRace()
  await zombies()
  await takeover()
  // Its own process: it SIGKILLs children of itself mid-save and inspects what they left.
  const script = fileURLToPath(new URL("./faults/killed-saves.js", import.meta.url))
  const killed = spawnSync(process.execPath, [script, "100", "2000"], { stdio: "inherit" })
  if (killed.status !== 0) process.exitCode = killed.status ?? 1
}
