// Runs examples/durable/worker.ts against a local Restate server, submits one review under a
// workflow id, prints its result, and stops everything: `node examples/durable/main.ts` on
// Node 22+ (linux-x64: the server binary comes from @restatedev/restate-server-linux-x64).
// In production the server (or cluster) and the workers run on their own; see docs/DURABLE.md.
import { spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const require = createRequire(import.meta.url)
const serverBinary = join(dirname(require.resolve("@restatedev/restate-server-linux-x64/package.json")), "bin", "restate-server")

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 1200; tries++) {
    if (await check().catch(() => false)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${what} did not come up`)
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGTERM")
  return exited
}

const dataDir = mkdtempSync(join(tmpdir(), "aml-durable-example-"))
const [node, admin, ingress, worker] = [await freePort(), await freePort(), await freePort(), await freePort()]
const server = spawn(serverBinary, ["--node-name", "example", "--no-logo"], {
  cwd: dataDir,
  env: {
    ...process.env,
    RESTATE_BASE_DIR: dataDir,
    RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
    RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
    RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
    RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
    RESTATE_DISABLE_TELEMETRY: "true",
  },
  stdio: "ignore",
})
const ingressUrl = `http://127.0.0.1:${ingress}`
const workerProcess = spawn(process.execPath, [fileURLToPath(new URL("./worker.ts", import.meta.url))], {
  // Every worker of a deployment shares one journal secret (docs/DURABLE.md, "Trust"); this
  // example draws one for its single worker. In production, keep it with your other secrets.
  env: {
    ...process.env,
    AML_RESTATE_JOURNAL_SECRET: process.env["AML_RESTATE_JOURNAL_SECRET"] ?? randomBytes(32).toString("base64url"),
    INGRESS: ingressUrl,
    PORT: String(worker),
    RESTATE_LOGGING: "ERROR",
  },
  stdio: "inherit",
})
try {
  await until(async () => (await fetch(`${ingressUrl}/restate/health`)).ok, "restate-server")
  await until(async () => (await fetch(`http://127.0.0.1:${admin}/health`)).ok, "restate-server admin")
  // The worker speaks HTTP/2 only: a TCP connection says it listens.
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(worker, "127.0.0.1", () => resolve(socket.destroy() !== undefined))
      socket.once("error", () => resolve(false))
    })
  await until(listening, "the worker")
  // Registering the worker's endpoint: Restate discovers the workflow and the journal object.
  const registered = await fetch(`http://127.0.0.1:${admin}/deployments`, {
    body: JSON.stringify({ force: true, uri: `http://127.0.0.1:${worker}` }),
    headers: { "content-type": "application/json" },
    method: "POST",
  })
  if (!registered.ok) throw new Error(`registering the worker failed: ${await registered.text()}`)
  // The workflow id makes the submission idempotent: sending it again runs nothing twice.
  const id = "review-42"
  await fetch(`${ingressUrl}/Review/${id}/run/send`, { body: JSON.stringify({ topic: "the durable example" }), headers: { "content-type": "application/json" }, method: "POST" })
  const output = await fetch(`${ingressUrl}/restate/workflow/Review/${id}/attach`)
  console.log(JSON.parse(await output.text()))
} finally {
  await stop(workerProcess)
  await stop(server)
  rmSync(dataDir, { force: true, recursive: true })
}
