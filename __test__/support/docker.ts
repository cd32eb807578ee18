// The real Docker daemon for the Docker Sandbox specs: `scripts/docker-daemon.sh start`
// (idempotent, serialized with flock) installs, starts and builds the busybox test image;
// the global teardown (docker-daemon-teardown.ts) stops a daemon the script started.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export const TEST_IMAGE = "aml-test-busybox:1"
const script = fileURLToPath(new URL("../../scripts/docker-daemon.sh", import.meta.url))

export function startDockerDaemon(): void {
  execFileSync("bash", [script, "start"], { stdio: ["ignore", "ignore", "inherit"], timeout: 600_000 })
}

/** Names of every container the daemon knows (running or not) with our label. */
export function amlContainers(): string[] {
  const out = execFileSync("docker", ["ps", "-a", "--filter", "label=dev.aml-jsx.sandbox", "--format", "{{.Names}}"], {
    encoding: "utf8",
  })
  return out.split("\n").filter((line) => line !== "")
}

/** All containers, labelled or not (what `docker ps -a` shows). */
export function allContainers(): string[] {
  const out = execFileSync("docker", ["ps", "-a", "--format", "{{.Names}}"], { encoding: "utf8" })
  return out.split("\n").filter((line) => line !== "")
}
