// dockerSandbox against a scripted Engine API on a Unix socket (DOCKER_HOST=unix://…), for
// the daemon answers a real daemon does not give on demand: a create without an id, a
// start failure whose cleanup fails too, a release whose removal fails, a failing exec.
import { createServer, type Server } from "node:http"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, expect, test } from "vitest"

import { dockerSandbox } from "@aml-jsx/sdk"

import { expectExact, rejection } from "./support/errors.js"

type Answer = { status: number; body?: unknown }
let directory: string
let server: Server
const requests: string[] = []
let script: (method: string, path: string) => Answer

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "aml-docker-fake-"))
  const socket = join(directory, "docker.sock")
  server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const path = (req.url ?? "").replace(/^\/v1\.41/, "")
      requests.push(`${req.method} ${path.split("?")[0]}`)
      const answer = req.url === "/_ping" ? { status: 200, body: "OK" } : script(req.method!, path)
      // Like the daemon: a 204 has no body and no length.
      const body = answer.status === 204 ? "" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body ?? {})
      const headers: Record<string, string | number> = { "API-Version": "1.41" }
      if (answer.status !== 204) Object.assign(headers, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) })
      res.writeHead(answer.status, headers)
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(socket, resolve))
  process.env.DOCKER_HOST = `unix://${socket}`
})

afterAll(async () => {
  delete process.env.DOCKER_HOST
  await new Promise((resolve) => server.close(resolve))
  await rm(directory, { recursive: true, force: true })
})

const request = () =>
  Object.freeze({ access: "read-write" as const, cwd: ".", evaluationId: "fake", root: ".", signal: new AbortController().signal })
const provider = () => dockerSandbox({ image: "img:1", workspace: directory })

test("a create answer without an id fails acquisition and removes by name", async () => {
  requests.length = 0
  script = (method) => (method === "POST" ? { status: 201, body: { Id: "" } } : { status: 204 })
  expectExact(await rejection(provider().acquire(request())), Error, "Docker Sandbox started without returning a container id")
  // The first acquisition negotiates the API version once (`GET /_ping`).
  expect(requests.slice(0, 2)).toEqual(["GET /_ping", "POST /containers/create"])
  expect(requests[2]).toMatch(/^DELETE \/containers\/aml-fake-[0-9a-f]{8}$/)
  expect(requests).toHaveLength(3)
})

test("a start failure whose cleanup fails too is the documented aggregate", async () => {
  script = (method, path) => {
    if (path.startsWith("/containers/create")) return { status: 201, body: { Id: "abc" } }
    if (path.startsWith("/containers/abc/start")) return { status: 500, body: { message: "start exploded" } }
    return { status: 500, body: { message: "remove exploded" } }
  }
  const error = await rejection(provider().acquire(request()))
  expectExact(error, AggregateError, "Docker Sandbox startup and cleanup failed")
  expect(error.errors.map((e: Error) => [e.constructor.name, e.message])).toEqual([
    ["Error", 'Docker Sandbox failed to start image "img:1": start exploded'],
    ["Error", "Docker Sandbox cleanup failed: remove exploded"],
  ])
})

test("a failed removal on release is `Docker Sandbox cleanup failed: …`; a failing exec is `Docker command failed: …`", async () => {
  script = (method, path) => {
    if (path.startsWith("/containers/create")) return { status: 201, body: { Id: "abc" } }
    if (path.startsWith("/containers/abc/start")) return { status: 204 }
    if (path.startsWith("/containers/abc/exec")) return { status: 500, body: { message: "exec exploded" } }
    return { status: 500, body: { message: "remove exploded" } }
  }
  const lease = await provider().acquire(request())
  expect(lease.id).toBe("abc")
  expectExact(await rejection(lease.runtime.exec("true")), Error, "Docker command failed: exec exploded")
  expectExact(await rejection(lease.release()), Error, "Docker Sandbox cleanup failed: remove exploded")
  expect(await rejection(lease.release())).toBe(await rejection(lease.release()))
})

test("an image missing locally is pulled once, as docker run does; the pull's error is the detail", async () => {
  requests.length = 0
  script = (method, path) => {
    if (path.startsWith("/containers/create")) return { status: 404, body: { message: "No such image: img:1" } }
    if (path.startsWith("/images/create")) return { status: 200, body: '{"status":"Pulling"}\n{"error":"registry unreachable"}\n' }
    return { status: 204 }
  }
  expectExact(await rejection(provider().acquire(request())), Error, 'Docker Sandbox failed to start image "img:1": registry unreachable')
  expect(requests.slice(0, 2)).toEqual(["POST /containers/create", "POST /images/create"])
})
