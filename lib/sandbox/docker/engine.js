// The way to the Docker daemon for dockerSandbox (BS-2): which socket (`DOCKER_HOST` when it
// names a `unix://` socket, else /var/run/docker.sock, as the CLI decides), the API version
// negotiated once per socket (src/process/docker.rs over crates/aml-docker), and the documented
// wording of daemon failures.

import { dockerNegotiate } from "../../core/native.js"

const DEFAULT_SOCKET = "/var/run/docker.sock"
const negotiated = new Map()

/** The daemon socket path, read at acquisition time (so an application may switch hosts). */
export function dockerSocket() {
  const host = process.env.DOCKER_HOST
  if (host === undefined || host === "") return DEFAULT_SOCKET
  if (host.startsWith("unix://")) return host.slice("unix://".length)
  throw new Error(`Docker command failed: DOCKER_HOST "${host}" is not a unix:// socket; the Docker Sandbox talks to the daemon's Unix socket`)
}

/** A native fault as the documented `Docker command failed: …` error. */
export function commandFailed(fault) {
  return new Error(`Docker command failed: ${fault.message}`)
}

/**
 * `{ socket, version }` for the current socket. A failed negotiation is not cached, so a
 * daemon started later is found; it rejects with the fault (`{ kind, message }`) as data.
 */
export async function dockerEngine() {
  const socket = dockerSocket()
  let pending = negotiated.get(socket)
  if (pending === undefined) {
    pending = dockerNegotiate(socket).then((outcome) => {
      if (outcome.fault) {
        negotiated.delete(socket)
        throw Object.assign(new Error(outcome.fault.message), { fault: outcome.fault })
      }
      return { socket, version: outcome.value }
    })
    negotiated.set(socket, pending)
  }
  return pending
}
