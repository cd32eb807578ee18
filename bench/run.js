// `npm run bench`: every benchmark the issues ask for, medians only.
//
// Each group runs in its own Node process, so one workload's heap (and the cost it adds to
// every later fork, allocation and GC) never skews the next one's numbers.
// `npm run bench -- scripts agents` runs only the named groups.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const ALL = ["evaluator", "agents", "otel", "tools", "native-tools", "scripts", "cli", "acp", "workspaces", "docker", "journal", "durable", "scaling", "studio"]
const groups = process.argv.length > 2 ? process.argv.slice(2) : ALL
const script = fileURLToPath(new URL("./group.js", import.meta.url))

console.log(`node ${process.version}, ${process.platform}-${process.arch}`)
for (const group of groups) {
  const result = spawnSync(process.execPath, ["--expose-gc", script, group], { stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
