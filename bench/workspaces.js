// Workspace persistence benchmarks (issue 9): save and load of a 3,000-file Workspace (1 KiB
// and 4 KiB files) through filesystemWorkspace in both formats, and 100 × 500 KB files in
// archive format. Medians of whole operations in milliseconds.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { filesystemWorkspace } from "../index.js"

const ROUNDS = 7

// Wall time, and the process's CPU time (all threads: JS and the addon's runtime), which a
// loaded shared machine distorts far less.
async function median(label, rounds, run) {
  await run() // warm-up
  const walls = []
  const cpus = []
  for (let i = 0; i < rounds; i++) {
    const cpu = process.cpuUsage()
    walls.push(await run())
    const used = process.cpuUsage(cpu)
    cpus.push((used.user + used.system) / 1000)
  }
  const mid = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  console.log(`${label.padEnd(44)} median ${mid(walls).toFixed(1)} ms wall, ${mid(cpus).toFixed(1)} ms CPU  (${rounds} rounds)`)
}

async function fill(directory, files, size) {
  const body = Buffer.alloc(size)
  for (let i = 0; i < size; i++) body[i] = 32 + ((i * 7919) % 95) // text-like, compressible
  const perDirectory = 100
  for (let d = 0; d < Math.ceil(files / perDirectory); d++) {
    const sub = join(directory, `src/module-${d}`)
    await mkdir(sub, { recursive: true })
    const writes = []
    for (let f = d * perDirectory; f < Math.min(files, (d + 1) * perDirectory); f++) {
      body.write(String(f).padStart(8, "0"), 0) // every file distinct
      writes.push(writeFile(join(sub, `file-${f}.txt`), Buffer.from(body)))
    }
    await Promise.all(writes)
  }
}

const signal = new AbortController().signal
const saveRequest = { exclude: [], gitignore: true, outcome: "success", retention: 1, signal }

async function scenario(root, label, format, files, size) {
  const provider = filesystemWorkspace({ directory: join(root, `store-${label}-${format}`), format, temporaryDirectory: root })
  const request = { evaluationId: "bench", id: "bench", lock: true, signal }
  const seed = await provider.acquire({ ...request, load: false })
  await fill(seed.directory, files, size)
  await seed.save(saveRequest)
  await seed.release()
  const lease = await provider.acquire(request)
  await median(`workspace save ${label} (${format})`, ROUNDS, async () => {
    const started = performance.now()
    await lease.save(saveRequest)
    return performance.now() - started
  })
  await lease.release()
  await median(`workspace load ${label} (${format})`, ROUNDS, async () => {
    const started = performance.now()
    const loaded = await provider.acquire(request)
    const elapsed = performance.now() - started
    await loaded.release()
    return elapsed
  })
}

export async function workspaceBenchmarks() {
  const root = await mkdtemp(join(tmpdir(), "aml-bench-workspace-"))
  try {
    for (const format of ["archive", "folder"]) {
      await scenario(root, "3000 × 1 KiB", format, 3000, 1024)
      await scenario(root, "3000 × 4 KiB", format, 3000, 4096)
    }
    await scenario(root, "100 × 500 KB", "archive", 100, 500_000)
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
