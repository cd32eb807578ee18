// A three-node Restate cluster on 127.0.0.1 for the cluster spec (__test__/restate-cluster.spec.ts,
// docs/DURABLE.md "Cluster"): three restate-server processes of the npm package, each with its
// own ports and temporary data directory, one cluster name, replicated metadata (a Raft group of
// all three nodes) and a replicated log and partitions (default-replication 2), so the cluster
// keeps running when any one node dies. One loopback proxy (restate-local.js's) sits in front of
// the three ingresses, so clients and workers never depend on one node's ingress being alive.
// stop() ends every node and removes every directory, also when start-up fails half-way.

import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { freePort, startProxy } from "./restate-local.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const serverBinary = `${root}node_modules/@restatedev/restate-server-linux-x64/bin/restate-server`
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const alive = (child) => child.exitCode === null && child.signalCode === null
const exited = (child) => (alive(child) ? new Promise((resolve) => child.once("exit", () => resolve())) : Promise.resolve())

/** TOML for one node. `extra` is appended as is (more sections, e.g. `[worker.invoker]`). */
function config({ name, cluster, dataDir, ports, peers, provision, partitions, replication, extra }) {
  return `node-name = "${name}"
cluster-name = "${cluster}"
base-dir = "${dataDir}"
# Exactly one node provisions the cluster; the others join it through the metadata servers.
auto-provision = ${provision}
# Log and partition replication: each record and each partition's state on two of three nodes.
default-replication = ${replication}
default-num-partitions = ${partitions}
bind-address = "127.0.0.1:${ports.node}"
advertised-address = "http://127.0.0.1:${ports.node}/"
disable-telemetry = true
log-disable-ansi-codes = true
# Three nodes share a small machine: a small RocksDB budget each (the default is 2 GiB).
rocksdb-total-memory-size = "256 MiB"

[metadata-client]
# The replicated metadata server (Raft) runs on every node; each node knows all three.
type = "replicated"
addresses = [${peers.map((peer) => `"${peer}"`).join(", ")}]

[admin]
bind-address = "127.0.0.1:${ports.admin}"

[ingress]
bind-address = "127.0.0.1:${ports.ingress}"

[bifrost]
default-provider = "replicated"
${extra}
`
}

async function answers(url) {
  try {
    const response = await fetch(url)
    await response.arrayBuffer()
    return response.ok
  } catch {
    return false
  }
}

/**
 * What a node serves, from its Prometheus metrics (the fabric port's /metrics; the admin API
 * has no partition table): partitions it leads, partition replicas it runs (leader or
 * follower), and the node id of the metadata (Raft) leader as it sees it.
 */
async function served(node) {
  const response = await fetch(`${node.address}metrics`)
  const text = await response.text()
  const gauge = (name) => Number((new RegExp(`^${name}\\{[^}]*\\} (\\S+)`, "m").exec(text) ?? [])[1] ?? 0)
  return {
    leads: gauge("restate_num_active_partition_leaders"),
    replicas: gauge("restate_num_active_partitions"),
    metadataLeader: gauge("restate_metadata_server_replicated_leader_id"),
  }
}

/**
 * Starts the cluster. `partitions` (default 1): one partition, so one node leads every
 * invocation and the spec can kill exactly that node. `extra`: TOML appended to every node's file.
 */
export async function startCluster({ partitions = 1, replication = 2, extra = "" } = {}) {
  if (!existsSync(serverBinary)) throw new Error("@restatedev/restate-server is not installed (npm install)")
  const cluster = `aml-test-${process.pid}-${Date.now()}`
  const specs = []
  for (let i = 1; i <= 3; i++) specs.push({ name: `n${i}`, ports: { node: await freePort(), admin: await freePort(), ingress: await freePort() } })
  const peers = specs.map((spec) => `http://127.0.0.1:${spec.ports.node}/`)
  const nodes = specs.map((spec, index) => {
    const dataDir = mkdtempSync(join(tmpdir(), `aml-restate-${spec.name}-`))
    const file = join(dataDir, "restate.toml")
    writeFileSync(file, config({ ...spec, cluster, dataDir, peers, provision: index === 0, partitions, replication, extra }))
    const log = openSync(join(dataDir, "server.log"), "w")
    const child = spawn(serverBinary, ["--config-file", file, "--no-logo"], {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: dataDir, TMPDIR: dataDir, DO_NOT_TRACK: "1" },
      stdio: ["ignore", log, log],
    })
    return {
      name: spec.name,
      dataDir,
      pid: child.pid,
      child,
      admin: `http://127.0.0.1:${spec.ports.admin}`,
      ingress: `http://127.0.0.1:${spec.ports.ingress}`,
      address: peers[index],
      alive: () => alive(child),
      /** SIGKILL: the node vanishes as a crashed host would, without a clean shutdown. */
      async kill() {
        if (alive(child)) child.kill("SIGKILL")
        await exited(child)
      },
    }
  })
  const live = () => nodes.filter((node) => node.alive())
  // Clients and workers reach "the cluster" here: each new connection goes to the first live
  // node whose ingress accepts it.
  const proxy = await startProxy(() => live().map((node) => Number(new URL(node.ingress).port)))
  const result = {
    nodes,
    ingress: proxy.uri,
    /** One admin API of a live node (every node runs the admin role). */
    admin: () => live()[0].admin,
    /** Runs SQL on the admin API's introspection (`POST /query`) of a live node. */
    async query(sql) {
      const response = await fetch(`${result.admin()}/query`, {
        body: JSON.stringify({ query: sql }),
        headers: { accept: "application/json", "content-type": "application/json" },
        method: "POST",
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`query failed: ${response.status} ${text}`)
      return JSON.parse(text).rows
    },
    /** What each live node serves (see served()), by node name. */
    async serving() {
      const entries = await Promise.all(live().map(async (node) => [node.name, await served(node)]))
      return Object.fromEntries(entries)
    },
    async register(uri) {
      const response = await fetch(`${result.admin()}/deployments`, {
        body: JSON.stringify({ force: true, uri }),
        headers: { "content-type": "application/json" },
        method: "POST",
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`registering ${uri} failed: ${response.status} ${text}`)
    },
    async stop() {
      await proxy.stop()
      await Promise.all(
        nodes.map(async (node) => {
          if (node.alive()) {
            const done = exited(node.child)
            node.child.kill("SIGTERM")
            const force = setTimeout(() => node.child.kill("SIGKILL"), 30_000)
            await done
            clearTimeout(force)
          }
          rmSync(node.dataDir, { force: true, recursive: true })
        }),
      )
    },
  }
  try {
    // A hang guard, not a timing assumption: every node's ingress and admin answer health.
    const deadline = Date.now() + 180_000
    for (const node of nodes) {
      for (const url of [`${node.admin}/health`, `${node.ingress}/restate/health`]) {
        while (!(await answers(url))) {
          if (!node.alive()) throw new Error(`restate-server ${node.name} exited (${node.dataDir}/server.log)`)
          if (Date.now() > deadline) throw new Error(`restate-server ${node.name} did not become healthy`)
          await pause(100)
        }
      }
    }
    // Ready for work once every partition has a leader and its replicas run: the first start
    // spends some seconds here while the nodes join the metadata group and the controller
    // places the partitions.
    for (;;) {
      const serving = Object.values(await result.serving())
      const sum = (key) => serving.reduce((total, node) => total + node[key], 0)
      if (sum("leads") === partitions && sum("replicas") === partitions * replication) break
      if (live().length < nodes.length) throw new Error("a restate-server exited during start-up")
      if (Date.now() > deadline) throw new Error(`the cluster placed no partitions: ${JSON.stringify(serving)}`)
      await pause(200)
    }
  } catch (error) {
    await result.stop()
    throw error
  }
  return result
}
