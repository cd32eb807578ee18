// `npm run bench -- faults`: the fault probes of issue 22 as figures (counts, not speed).
// Not in the default set: it takes a few minutes and needs python3.
import { swapRace } from "./faults/swap-race.js"
import { takeover } from "./faults/takeover.js"
import { zombies } from "./faults/zombies.js"

export async function faultBenchmarks() {
  console.log("faults")
  await swapRace()
  await zombies()
  await takeover()
}
