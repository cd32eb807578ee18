// vitest globalSetup: after the run, stop a Docker daemon that scripts/docker-daemon.sh
// started (by its PID file; a daemon it did not start is left alone). Starting is lazy, in
// the Docker specs' beforeAll, so runs without them never touch Docker.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export function teardown(): void {
  const script = fileURLToPath(new URL("../../scripts/docker-daemon.sh", import.meta.url))
  execFileSync("bash", [script, "stop"], { stdio: "inherit" })
}
