// An HTTP hop between Restate workers and the ingress for the durable specs: it forwards every
// journal request, reports each record Restate answered (opened with the workers' secret, so
// a spec sees the Agent's text), and can inject one fault into a chosen request: an answer of
// its own (e.g. 503) without forwarding, or a hold before forwarding (a record whose answer
// comes after the worker's journal timeout).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

import { openSealed } from "./journal-seal.js"

export interface Recorded {
  /** The sending worker's pid, when it sends `x-aml-worker`. */
  pid: number
  object: string
  workflow: string
  key: string
  digest: string
  /** The run (x-aml-journal-run). */
  run: string
  /** The recorded Agent text, when the entry opened. */
  text: string | undefined
  /** The attempt token (x-aml-journal-attempt). */
  attempt: string | undefined
  /** Milliseconds from the request's arrival to Restate's answer. */
  ms: number
  /** The stored entry's size in bytes. */
  bytes: number
}

export interface Fault {
  /** The journal handler whose request is struck. */
  handler: "load" | "page" | "record"
  /** The journal object's name. */
  object: string
  /** How many matching requests pass first (default 0: the first is struck). */
  after?: number
  /** Answer this status without forwarding. */
  status?: number
  /** Hold the request this long, then forward it. */
  holdMs?: number
}

export interface Recorder {
  url: string
  /** Strikes the next request matching `fault` (one fault at a time). */
  arm(fault: Fault): void
  /** How many faults struck since start. */
  struck(): number
  close(): Promise<void>
}

/**
 * `onRecorded` runs for each record Restate answered, before the worker gets the answer; a
 * promise it returns is awaited, so a spec can act at an exact point of a run.
 */
export async function startRecorder(target: string, secret: string, onRecorded: (recorded: Recorded) => void | Promise<void>): Promise<Recorder> {
  let armed: (Fault & { seen: number }) | undefined
  let struck = 0
  const sockets = new Set<import("node:net").Socket>()
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now()
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const path = /^\/([^/]+)\/([^/]+)\/([a-z]+)$/.exec(req.url ?? "")
    const [object, workflow, handler] = path === null ? [] : [decodeURIComponent(path[1]!), decodeURIComponent(path[2]!), path[3]]
    if (armed !== undefined && armed.handler === handler && armed.object === object && armed.seen++ >= (armed.after ?? 0)) {
      const fault = armed
      armed = undefined
      struck++
      if (fault.status !== undefined) {
        res.writeHead(fault.status, { "content-type": "application/json" }).end(JSON.stringify({ message: "injected by the spec's recorder" }))
        return
      }
      await new Promise((resolve) => setTimeout(resolve, fault.holdMs ?? 0))
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== "host" && name !== "content-length" && name !== "connection")) as Record<string, string>
    const answer = await fetch(`${target}${req.url}`, { body: body.length > 0 ? body : undefined, headers, method: req.method })
    const text = Buffer.from(await answer.arrayBuffer())
    if (answer.ok && handler === "record") {
      const stored = JSON.parse(body.toString("utf8")) as { key: string; digest: string; sealed: string }
      const run = String(req.headers["x-aml-journal-run"] ?? "")
      const entry = openSealed(secret, { object: object!, workflow: workflow!, run, key: stored.key, digest: stored.digest }, stored.sealed) as
        | { value?: { text?: string } }
        | undefined
      await onRecorded({
        attempt: req.headers["x-aml-journal-attempt"] as string | undefined,
        bytes: body.length,
        digest: stored.digest,
        key: stored.key,
        ms: performance.now() - arrived,
        run,
        object: object!,
        pid: Number(req.headers["x-aml-worker"]),
        text: entry?.value?.text,
        workflow: workflow!,
      })
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
    res.end(text)
  }
  const server: Server = createServer((req, res) => {
    // A worker killed (or timed out) mid-request leaves a broken request: dropped, never thrown here.
    forward(req, res).catch(() => res.destroy())
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arm(fault) {
      armed = { ...fault, seen: 0 }
    },
    struck: () => struck,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
