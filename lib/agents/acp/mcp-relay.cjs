"use strict"
// The Sandbox MCP relay (INVENTORY BA-0 "Sandbox relay"): copied into the guest as
// /tmp/aml-mcp-relay-<uuid>/relay.cjs and run with `node`, so it must stay one file without
// dependencies. It only moves bytes: each HTTP request on the guest's 127.0.0.1 becomes one
// JSON line on stdout, and the host (crates/aml-acp/src/relay.rs), which owns the bridge,
// answers with one JSON line on stdin. Bodies travel base64; lines stay under 8 MiB.

const http = require("node:http")

const BODY_LIMIT = 4 * 1024 * 1024
const LINE_LIMIT = 8 * 1024 * 1024

const waiting = new Map()
let next = 0

function send(frame) {
  process.stdout.write(`${JSON.stringify(frame)}\n`)
}

function answer(response, status, headers, body) {
  if (response.writableEnded) return
  response.writeHead(status, { ...headers, "content-length": body.length })
  response.end(body)
}

const server = http.createServer((request, response) => {
  const declared = Number(request.headers["content-length"] ?? 0)
  if (declared > BODY_LIMIT) {
    answer(response, 413, { connection: "close" }, Buffer.alloc(0))
    request.destroy()
    return
  }
  const chunks = []
  let size = 0
  request.on("data", (chunk) => {
    size += chunk.length
    if (size > BODY_LIMIT) {
      answer(response, 413, { connection: "close" }, Buffer.alloc(0))
      request.destroy()
      return
    }
    chunks.push(chunk)
  })
  request.on("end", () => {
    if (size > BODY_LIMIT) return
    next += 1
    const id = next
    waiting.set(id, response)
    response.on("close", () => waiting.delete(id))
    send({
      authorization: request.headers.authorization ?? null,
      body: Buffer.concat(chunks).toString("base64"),
      id,
      kind: "request",
      method: request.method,
      path: request.url,
    })
  })
})

function deliver(line) {
  let frame
  try {
    frame = JSON.parse(line)
  } catch {
    return
  }
  const response = waiting.get(frame?.id)
  if (frame?.kind !== "response" || response === undefined) return
  waiting.delete(frame.id)
  const body = Buffer.from(typeof frame.body === "string" ? frame.body : "", "base64")
  const headers = {}
  if (body.length > 0) headers["content-type"] = "application/json"
  if (frame.allow !== undefined) headers.allow = String(frame.allow)
  answer(response, frame.status, headers, body)
}

// Host frames: newline-delimited; a partial line is kept until its newline arrives.
let partial = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (text) => {
  partial += text
  if (partial.length > LINE_LIMIT && !partial.includes("\n")) {
    process.stderr.write(`relay: a host frame exceeded ${LINE_LIMIT} bytes\n`)
    process.exit(1)
  }
  let newline
  while ((newline = partial.indexOf("\n")) !== -1) {
    const line = partial.slice(0, newline)
    partial = partial.slice(newline + 1)
    if (line.trim() !== "") deliver(line)
  }
})
// The host closing stdin is the shutdown request.
process.stdin.on("end", () => process.exit(0))

server.on("error", (error) => {
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => send({ kind: "ready", port: server.address().port }))
