// A crashed lock holder (issue 22 item 4): when the process holding a Workspace's lock is
// SIGKILLed, the next acquisition on this machine takes the lock over at once instead of
// failing with WorkspaceConflictError for 20 minutes. For localWorkspace (`<dir>.lock`),
// filesystemWorkspace (the store's `<segment>.lock`) and s3Workspace (`lock.json`; the child
// uses the native client, the parent an application S3Client: one Rust lock behind both).
// The holder is a real child process; each takeover must succeed on its first attempt.

import { spawn, type ChildProcess } from "node:child_process"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { WorkspaceConflictError, filesystemWorkspace, localWorkspace, s3Workspace } from "@aml-jsx/sdk"
import { afterAll, beforeAll, describe, expect } from "vitest"

import { rejection } from "./support/errors.js"
import { startMoto, type Moto } from "./support/moto.js"
import { testNeeding } from "./support/test-groups.js"

// Needs the moto S3 server (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("moto")

const sdk = fileURLToPath(new URL("../index.js", import.meta.url))
const ROUNDS = 5

let root: string
let moto: Moto
beforeAll(async () => {
  root = realpathSync(await mkdtemp(join(tmpdir(), "aml-crashed-holder-")))
  moto = await startMoto()
}, 180_000)
afterAll(async () => {
  await moto?.stop()
  await rm(root, { force: true, recursive: true })
})

const request = (id: string) => ({ evaluationId: "e", id, signal: new AbortController().signal })

// The child builds the provider from `provider` (an expression over the SDK's exports and
// `options`), acquires Workspace `id`, prints "held" and waits to be killed.
function holder(provider: string, options: unknown, id: string): Promise<ChildProcess> {
  const script = `
    const sdk = await import(${JSON.stringify(sdk)})
    const options = ${JSON.stringify(options)}
    const provider = ${provider}
    await provider.acquire({ evaluationId: "child", id: ${JSON.stringify(id)}, signal: new AbortController().signal })
    process.stdout.write("held\\n")
    setInterval(() => {}, 60_000)
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] })
  let errors = ""
  child.stderr!.on("data", (chunk) => (errors += chunk))
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      if (String(chunk).includes("held")) resolve(child)
    })
    child.on("exit", (code) => reject(new Error(`holder exited (${code}) before holding: ${errors}`)))
  })
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on("exit", resolve))
  child.kill("SIGKILL")
  await exited
}

type Provider = { acquire(request: unknown): Promise<{ release(): Promise<void> }> }

async function crashAndTakeOver(make: () => Provider, child: [string, unknown], id: string) {
  for (let round = 0; round < ROUNDS; round++) {
    const held = await holder(child[0], child[1], id)
    // A live holder still excludes.
    const conflict = await rejection(make().acquire(request(id)))
    expect(WorkspaceConflictError.is(conflict, id)).toBe(true)
    await kill(held)
    // The first attempt after the crash wins.
    const lease = await make().acquire(request(id))
    await lease.release()
  }
}

describe("a SIGKILLed lock holder is taken over at once", () => {
  it("localWorkspace", async () => {
    const directory = join(root, "local")
    await mkdir(directory)
    await crashAndTakeOver(() => localWorkspace({ directory }), ["sdk.localWorkspace(options)", { directory }], "local")
  }, 120_000)

  it("filesystemWorkspace", async () => {
    const directory = join(root, "store")
    await mkdir(directory)
    await crashAndTakeOver(() => filesystemWorkspace({ directory }), ["sdk.filesystemWorkspace(options)", { directory }], "fs")
  }, 120_000)

  it("s3Workspace", async () => {
    const bucket = await moto.bucket()
    const config = { credentials: { accessKeyId: "testing", secretAccessKey: "testing" }, endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" }
    const client = moto.client()
    await crashAndTakeOver(() => s3Workspace({ bucket, client }), ["sdk.s3Workspace(options)", { bucket, config }], "s3")
  }, 120_000)
})
