// A real S3 server for the S3 Workspace specs: moto (installed into target/moto-venv by
// scripts/install-moto.sh), on 127.0.0.1 and a free port, readiness-polled, stopped by PID.
// It runs through scripts/moto-server.py, which makes its conditional writes atomic.

import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync, openSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3"

const root = fileURLToPath(new URL("../..", import.meta.url))
const serverPath = `${root}target/moto-venv/bin/moto_server`
// moto run with its requests serialized, so conditional writes are atomic as on S3 (see the script).
const python = `${root}target/moto-venv/bin/python`
const launcher = `${root}scripts/moto-server.py`

export interface Moto {
  endpoint: string
  client(options?: { endpoint?: string }): S3Client
  bucket(): Promise<string>
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })
}

async function ready(endpoint: string, child: ChildProcess): Promise<void> {
  // Hang guard only; a loaded machine may take a while to start Python.
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`)
    try {
      const response = await fetch(endpoint)
      await response.arrayBuffer()
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error("moto_server did not become ready")
}

let buckets = 0

export async function startMoto(): Promise<Moto> {
  if (!existsSync(serverPath)) {
    const install = spawnSync("bash", [`${root}scripts/install-moto.sh`], { stdio: "inherit" })
    if (install.status !== 0) throw new Error("installing moto failed")
  }
  const port = await freePort()
  const log = openSync(`${root}target/moto-js-${port}.log`, "w")
  const child = spawn(python, [launcher, "-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", log, log] })
  const endpoint = `http://127.0.0.1:${port}`
  try {
    await ready(endpoint, child)
  } catch (error) {
    child.kill("SIGKILL")
    throw error
  }
  const client = (options: { endpoint?: string } = {}) =>
    new S3Client({
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
      endpoint: options.endpoint ?? endpoint,
      forcePathStyle: true,
      region: "us-east-1",
    })
  const admin = client()
  return {
    endpoint,
    client,
    async bucket() {
      const name = `aml-js-${process.pid}-${++buckets}`
      await admin.send(new CreateBucketCommand({ Bucket: name }))
      return name
    },
    async stop() {
      admin.destroy()
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once("exit", resolve))
      process.kill(child.pid!, "SIGTERM")
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, "SIGKILL"), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
