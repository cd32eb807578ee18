// A private Docker daemon for one spec: its own socket, data and exec roots under a temporary
// directory, no bridge network (containers get only their own loopback). The shared daemon's
// specs assert an empty `docker ps -a` after each test and vitest runs files in parallel, so
// containers of another spec must not appear there. Needs root, dockerd
// (scripts/docker-daemon.sh installs it) and unshare (util-linux).
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"

import { delay } from "./async.js"

export function dockerdAvailable(): boolean {
  return (
    process.getuid?.() === 0 &&
    spawnSync("dockerd", ["--version"], { stdio: "ignore" }).status === 0 &&
    spawnSync("unshare", ["--net", "true"], { stdio: "ignore" }).status === 0
  )
}

export interface PrivateDaemon {
  host: string
  docker(args: string[], input?: Buffer): string
  stop(): Promise<void>
}

export async function startPrivateDaemon(): Promise<PrivateDaemon> {
  const bridge = "/sys/class/net/docker0"
  const hadBridge = existsSync(bridge)
  const root = mkdtempSync("/tmp/aml-dockerd-")
  const socket = join(root, "docker.sock")
  const pidfile = join(root, "dockerd.pid")
  // In a network namespace of its own: a daemon started with `--bridge none` deletes the
  // host's `docker0` at start-up (it removes the default bridge it will not use), which broke
  // the shared daemon's containers ("could not find bridge docker0") whenever this spec
  // started after it. Its socket is a path, so the host still reaches it.
  const daemon = spawn(
    "unshare",
    ["--net", "dockerd", "--host", `unix://${socket}`, "--data-root", join(root, "data"), "--exec-root", join(root, "exec"), "--pidfile", pidfile, "--bridge", "none", "--iptables=false", "--ip6tables=false"],
    { detached: false, stdio: ["ignore", "ignore", "pipe"] },
  )
  let log = ""
  daemon.stderr!.on("data", (chunk) => (log = (log + chunk).slice(-8192)))
  const host = `unix://${socket}`
  const docker = (args: string[], input?: Buffer) =>
    execFileSync("docker", ["-H", host, ...args], { encoding: "utf8", input, maxBuffer: 1 << 30, stdio: ["pipe", "pipe", "pipe"] })
  const stop = async () => {
    try {
      const ids = docker(["ps", "-aq"]).split("\n").filter((id) => id !== "")
      if (ids.length > 0) docker(["rm", "-f", ...ids])
    } finally {
      const pid = existsSync(pidfile) ? Number(readFileSync(pidfile, "utf8")) : daemon.pid!
      process.kill(pid, "SIGTERM")
      for (let i = 0; i < 150 && daemon.exitCode === null; i++) await delay(100)
      rmSync(root, { force: true, recursive: true })
    }
  }
  try {
    for (let i = 0; ; i++) {
      if (existsSync(socket) && spawnSync("docker", ["-H", host, "info"], { stdio: "ignore" }).status === 0) break
      if (daemon.exitCode !== null || i > 600) throw new Error(`private dockerd did not start: ${log}`)
      await delay(100)
    }
    // The shared daemon's bridge must outlive this one's start-up (see the namespace above).
    if (hadBridge && !existsSync(bridge)) throw new Error("the private dockerd removed the host's docker0 bridge")
  } catch (error) {
    // A daemon that failed a check is still running: stop it, or it outlives the run.
    if (daemon.exitCode === null) await stop().catch(() => {})
    else rmSync(root, { force: true, recursive: true })
    throw error
  }
  return { docker, host, stop }
}
