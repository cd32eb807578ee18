// <Script> host workload: 200 sequential `<Script command="true" />` per evaluation, the
// per-Script cost of spawn, supervision, bounded collection and group teardown. For scale,
// the same 200 runs of Node's own `child_process.spawn` (no group kill, no reaping of
// descendants) are measured next to it.
import { spawn } from "node:child_process"

import { AmlRuntime, Script } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

const SCRIPTS = 200

function nodeSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: ["ignore", "pipe", "pipe"] })
    child.on("error", reject)
    child.on("close", resolve)
  })
}

export async function scriptBenchmarks() {
  const runtime = new AmlRuntime()
  const tree = Array.from({ length: SCRIPTS }, () => jsx(Script, { command: "true" }))
  await measure('<Script command="true" /> ×200 sequential', {
    items: SCRIPTS,
    rounds: 7,
    run: () => runtime.evaluate(tree),
  })
  await measure("node child_process.spawn('true') ×200 (reference)", {
    items: SCRIPTS,
    rounds: 7,
    run: async () => {
      for (let i = 0; i < SCRIPTS; i++) await nodeSpawn()
    },
  })
}
