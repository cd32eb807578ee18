// Cold start of `aml run`: the whole process, wall clock, `node bin/aml.js run
// examples/basic.tsx` (the in-process loader with its compile cache, the SDK bundle when
// current, the addon, one evaluation, exit). `node -e 0`, `aml --version` and the same run
// through the module hooks (AML_RUN_LOADER=hooks, the fallback path) run alongside for
// scale. Median of 10.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const ROUNDS = 10

function wallClock(label, args, extraEnv = {}) {
  const env = { ...process.env, ...extraEnv }
  // One unmeasured run warms the page cache (and the compile cache), as a user's second run would be.
  spawnSync(process.execPath, args, { cwd: root, env, stdio: "ignore" })
  const times = []
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    const result = spawnSync(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    times.push(performance.now() - started)
    if (result.status !== 0) throw new Error(`${label} failed: ${result.stderr}`)
  }
  times.sort((a, b) => a - b)
  const median = (times[ROUNDS / 2 - 1] + times[ROUNDS / 2]) / 2
  console.log(`${label.padEnd(48)} median ${median.toFixed(0)} ms/process  (min–max ${times[0].toFixed(0)}–${times[ROUNDS - 1].toFixed(0)}, ${ROUNDS} runs)`)
}

export function cliBenchmarks() {
  wallClock("node -e 0 (reference)", ["-e", "0"])
  wallClock("aml --version", ["bin/aml.js", "--version"])
  wallClock("aml run examples/basic.tsx (cold start)", ["bin/aml.js", "run", "examples/basic.tsx"])
  wallClock("aml run examples/basic.tsx via the module hooks", ["bin/aml.js", "run", "examples/basic.tsx"], { AML_RUN_LOADER: "hooks" })
}
