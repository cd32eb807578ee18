// dockerSandbox when no daemon answers (DOCKER_HOST names a socket nobody listens on): a
// clear acquisition error naming the image and the socket, nothing created, nothing leaked;
// a DOCKER_HOST that is not a unix:// socket is refused with the Docker command wording.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, expect, test } from "vitest"

import { dockerSandbox } from "@aml-jsx/sdk"
import { liveCancellations } from "../lib/core/native.js"

import { expectExact, rejection } from "./support/errors.js"

let directory: string
const saved = process.env.DOCKER_HOST

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "aml-docker-none-"))
})

afterAll(async () => {
  if (saved === undefined) delete process.env.DOCKER_HOST
  else process.env.DOCKER_HOST = saved
  await rm(directory, { recursive: true, force: true })
})

const request = () =>
  Object.freeze({ access: "read-write" as const, cwd: ".", evaluationId: "e", root: ".", signal: new AbortController().signal })

test("a daemon that is not running fails acquisition clearly and leaks nothing", async () => {
  const socket = join(directory, "docker.sock")
  process.env.DOCKER_HOST = `unix://${socket}`
  const before = liveCancellations()
  const error = await rejection(dockerSandbox({ image: "busybox:1", workspace: directory }).acquire(request()))
  expectExact(
    error,
    Error,
    `Docker Sandbox failed to start image "busybox:1": Cannot connect to the Docker daemon at unix://${socket}. Is the docker daemon running?`,
  )
  expect(liveCancellations()).toBe(before)
})

test("DOCKER_HOST must name a unix:// socket (a start failure worded as a Docker command failure)", async () => {
  process.env.DOCKER_HOST = "tcp://127.0.0.1:2375"
  const error = await rejection(dockerSandbox({ image: "busybox:1", workspace: directory }).acquire(request()))
  expectExact(
    error,
    Error,
    'Docker Sandbox failed to start image "busybox:1": Docker command failed: DOCKER_HOST "tcp://127.0.0.1:2375" is not a unix:// socket; the Docker Sandbox talks to the daemon\'s Unix socket',
  )
})
