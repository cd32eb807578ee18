// Killed saves (issue 22 item 5): `rounds` child processes each acquire a filesystemWorkspace,
// write a tree and save it, and are SIGKILLed at a random point of the save; then one more
// save runs, and the script prints what is left that nothing references: revisions no
// index names, owner records, `.aml-tmp-*` scratch files, and materialization roots in the
// temporary directory. After the last save all of it should be 0 — unless the backlog is
// larger than one save's sweep budget (10,000 deletions), in which case the script saves
// again until it is, and says how many saves that took.
//
//   node bench/faults/killed-saves.js [rounds=100] [files=2000]
//
// Uses the built package (native/ must exist: `npm run build`).
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { filesystemWorkspace, workspaceStorageSegment } from "../../index.js"

const ID = "killed-saves"
const signal = new AbortController().signal
const saveRequest = { exclude: [], gitignore: false, outcome: "success", retention: 1, signal }

function provider(store, temporaryDirectory, format) {
  return filesystemWorkspace({ directory: store, format, temporaryDirectory })
}

async function fill(directory, files, generation) {
  const body = Buffer.alloc(2048, 97)
  for (let f = 0; f < files; f++) {
    const sub = join(directory, `module-${f % 10}`)
    await mkdir(sub, { recursive: true })
    body.write(`${generation}:${f}`, 0)
    await writeFile(join(sub, `file-${f}.txt`), body)
  }
}

/** The child: acquire, write, say "ready", save (the parent kills it somewhere in there). */
async function child([store, temporaryDirectory, format, files, generation]) {
  const workspaces = provider(store, temporaryDirectory, format)
  const lease = await workspaces.acquire({ evaluationId: "fault", id: ID, lock: true, load: true, signal })
  await fill(lease.directory, Number(files), generation)
  process.stdout.write("ready\n")
  const started = performance.now()
  await lease.save(saveRequest)
  // How long the save itself took, measured here: the parent's view adds pipe latency and
  // process exit, and kills must land inside the save.
  process.stdout.write(`saved ${performance.now() - started}\n`)
  await lease.release()
}

function run(args) {
  const script = fileURLToPath(import.meta.url)
  const proc = spawn(process.execPath, [script, "child", ...args], { stdio: ["ignore", "pipe", "inherit"] })
  const lines = []
  const waiters = []
  let buffered = ""
  proc.stdout.on("data", (chunk) => {
    buffered += chunk
    let at
    while ((at = buffered.indexOf("\n")) >= 0) {
      lines.push(buffered.slice(0, at))
      buffered = buffered.slice(at + 1)
      for (const wake of waiters.splice(0)) wake()
    }
  })
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })))
  const find = (text) => lines.find((line) => line.split(" ")[0] === text)
  const line = async (text) => {
    while (find(text) === undefined) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`child exited before "${text}"`)
      await new Promise((resolve) => {
        waiters.push(resolve)
        proc.once("exit", resolve)
      })
    }
    return find(text)
  }
  return { proc, line, exited, saved: () => find("saved") !== undefined }
}

async function names(directory) {
  try {
    return await readdir(directory)
  } catch {
    return []
  }
}

async function sizeOf(path) {
  const info = await stat(path)
  if (!info.isDirectory()) return { files: 1, bytes: info.size }
  let total = { files: 0, bytes: 0 }
  for (const name of await names(path)) {
    const part = await sizeOf(join(path, name))
    total = { files: total.files + part.files, bytes: total.bytes + part.bytes }
  }
  return total
}

/** What no index references, in the store and the temporary directory. */
async function inventory(store, temporaryDirectory) {
  const segment = join(store, workspaceStorageSegment(ID))
  let indexed = []
  try {
    indexed = JSON.parse(await readFile(join(segment, "workspace.json"), "utf8")).revisions.map((r) => r.id)
  } catch {}
  const revisions = join(segment, "revisions")
  const garbage = { revisions: 0, revisionFiles: 0, revisionBytes: 0, records: 0, scratch: 0, materializations: 0, materializationBytes: 0 }
  const scratchDirs = [segment, join(segment, "owners"), revisions]
  for (const name of await names(revisions)) {
    if (name.startsWith(".aml-tmp-")) continue
    if (!name.endsWith(".tar.gz")) scratchDirs.push(join(revisions, name))
    if (indexed.includes(name.replace(/\.tar\.gz$/, ""))) continue
    const size = await sizeOf(join(revisions, name))
    garbage.revisions++
    garbage.revisionFiles += size.files
    garbage.revisionBytes += size.bytes
  }
  for (const dir of scratchDirs) garbage.scratch += (await names(dir)).filter((n) => n.startsWith(".aml-tmp-")).length
  garbage.records = (await names(join(segment, "owners"))).filter((n) => !n.startsWith(".aml-tmp-")).length
  for (const name of await names(temporaryDirectory)) {
    if (!name.startsWith("aml-workspace-")) continue
    garbage.materializations++
    garbage.materializationBytes += (await sizeOf(join(temporaryDirectory, name))).bytes
  }
  return garbage
}

function describe(g) {
  const mb = (bytes) => (bytes / 1e6).toFixed(1)
  return `${g.revisions} unindexed revisions (${g.revisionFiles} files, ${mb(g.revisionBytes)} MB), ${g.records} owner records, ${g.scratch} .aml-tmp-* files, ${g.materializations} materializations (${mb(g.materializationBytes)} MB)`
}

async function scenario(root, format, rounds, files) {
  const store = join(root, `store-${format}`)
  const temporaryDirectory = join(root, `tmp-${format}`)
  await mkdir(temporaryDirectory, { recursive: true })
  const args = (generation) => [store, temporaryDirectory, format, String(files), generation]
  // Two saves complete; the second (over a published revision, as every later one) measures
  // how long a save takes here.
  let saveMs = 0
  for (const generation of ["g0", "g0b"]) {
    const complete = run(args(generation))
    saveMs = Number((await complete.line("saved")).split(" ")[1])
    await complete.exited
  }
  let killed = 0
  for (let round = 1; round <= rounds; round++) {
    const saver = run(args(`g${round}`))
    await saver.line("ready")
    await new Promise((resolve) => setTimeout(resolve, Math.random() * saveMs * 1.25))
    saver.proc.kill("SIGKILL")
    const { signal } = await saver.exited
    if (signal === "SIGKILL" && !saver.saved()) killed++
  }
  const before = await inventory(store, temporaryDirectory)
  console.log(`${format}: ${rounds} saves of ${files} files (${saveMs.toFixed(0)} ms each), ${killed} SIGKILLed mid-save`)
  console.log(`  left before one more save: ${describe(before)}`)
  const workspaces = provider(store, temporaryDirectory, format)
  const total = (g) => g.revisions + g.records + g.scratch + g.materializations
  let after
  for (let save = 1; save <= 20; save++) {
    const lease = await workspaces.acquire({ evaluationId: "fault", id: ID, lock: true, load: true, signal })
    await writeFile(join(lease.directory, "last.txt"), `last ${save}`)
    const saveStarted = performance.now()
    await lease.save(saveRequest)
    const lastSaveMs = performance.now() - saveStarted
    await lease.release()
    after = await inventory(store, temporaryDirectory)
    console.log(`  left after save ${save} (${lastSaveMs.toFixed(0)} ms): ${describe(after)}`)
    if (total(after) === 0) break
  }
  return total(after)
}

if (process.argv[2] === "child") {
  await child(process.argv.slice(3))
} else {
  const rounds = Number(process.argv[2] ?? 100)
  const files = Number(process.argv[3] ?? 2000)
  const root = await mkdtemp(join(tmpdir(), "aml-fault-killed-saves-"))
  try {
    let garbage = 0
    for (const format of ["archive", "folder"]) garbage += await scenario(root, format, rounds, files)
    console.log(garbage === 0 ? "no garbage left" : `GARBAGE LEFT: ${garbage} entries`)
    process.exitCode = garbage === 0 ? 0 : 1
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
