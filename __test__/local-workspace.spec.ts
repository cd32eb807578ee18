// BW-1 localWorkspace: options, direct materialization, the proper-lockfile-compatible lock
// (`<dir>.lock`), conflicts (including a lock directory another process made), compromise,
// idempotent release.
import { mkdir, mkdtemp, rm, rmdir, symlink, utimes, writeFile } from "node:fs/promises"
import { existsSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, expect, test } from "vitest"

import { WorkspaceConflictError, localWorkspace } from "@aml-jsx/sdk"
import { expectExact, rejection } from "./support/errors.js"

let root: string
let directory: string

beforeAll(async () => {
  root = realpathSync(await mkdtemp(join(tmpdir(), "aml-local-ws-")))
  directory = join(root, "repo")
  await mkdir(directory)
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const request = (id: string, extra: Record<string, unknown> = {}) => ({
  evaluationId: "e",
  id,
  signal: new AbortController().signal,
  ...extra,
})

function catching(run: () => unknown): any {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

test("option errors", () => {
  expectExact(catching(() => localWorkspace(undefined as never)), TypeError, "Local Workspace options must be an object")
  const unreadable = {
    get directory(): string {
      throw new Error("no")
    },
  }
  const error = catching(() => localWorkspace(unreadable))
  expectExact(error, TypeError, "Local Workspace directory must be readable")
  expect(error.cause.message).toBe("no")
  for (const bad of ["", " x", 3]) {
    expectExact(catching(() => localWorkspace({ directory: bad as never })), TypeError, "Local Workspace directory must be a non-empty normalized string")
  }
  const provider = localWorkspace({ directory })
  expect(provider.name).toBe("local")
  expect(Object.isFrozen(provider)).toBe(true)
})

test("the directory is the Workspace; the lock is a sibling directory", async () => {
  const provider = localWorkspace({ directory })
  const lease = await provider.acquire(request("review-42"))
  expect(lease.id).toMatch(/^local-[0-9a-f-]{36}$/)
  expect(lease.directory).toBe(directory)
  expect(lease.handle).toEqual({ directory, kind: "local-workspace" })
  expect(existsSync(`${directory}.lock`)).toBe(true)
  // Another provider on the same physical directory (through a symlink) contends.
  await symlink(directory, join(root, "alias"))
  const other = localWorkspace({ directory: join(root, "alias") })
  const conflict = await rejection(other.acquire(request("another-id")))
  expect(conflict).toBeInstanceOf(WorkspaceConflictError)
  expect(WorkspaceConflictError.is(conflict, "another-id")).toBe(true)
  // lock={false} skips the lock.
  const unlocked = await other.acquire(request("x", { lock: false }))
  await unlocked.save()
  await unlocked.release()
  await lease.save()
  await Promise.all([lease.release(), lease.release()])
  expect(existsSync(`${directory}.lock`)).toBe(false)
  const again = await other.acquire(request("y"))
  await again.release()
})

test("a lock directory made by another process (the TypeScript SDK's protocol) is respected", async () => {
  await mkdir(`${directory}.lock`)
  try {
    const conflict = await rejection(localWorkspace({ directory }).acquire(request("ts-held")))
    expect(WorkspaceConflictError.is(conflict, "ts-held")).toBe(true)
    // Stale after 20 minutes without a refresh: taken over.
    const old = new Date(Date.now() - 21 * 60 * 1000)
    await utimes(`${directory}.lock`, old, old)
    const lease = await localWorkspace({ directory }).acquire(request("taker"))
    await lease.release()
  } finally {
    if (existsSync(`${directory}.lock`)) await rmdir(`${directory}.lock`)
  }
})

test("a compromised lock fails save and release", async () => {
  const lease = await localWorkspace({ directory }).acquire(request("c"))
  const later = new Date(Date.now() + 3600_000)
  await utimes(`${directory}.lock`, later, later)
  const error = await rejection(lease.save())
  expectExact(error, Error, `Local Workspace "${directory}" lock was compromised`)
  expectExact(await rejection(lease.release()), Error, `Local Workspace "${directory}" lock was compromised`)
  await rmdir(`${directory}.lock`)
})

test("a missing or non-directory Workspace cannot be materialized", async () => {
  const missing = join(root, "missing")
  const error = await rejection(localWorkspace({ directory: missing }).acquire(request("m")))
  expectExact(error, Error, `Local Workspace "${missing}" cannot be materialized`)
  expect(error.cause.message).toBe("Local Workspace materialization must be a directory")
  const file = join(root, "file")
  await writeFile(file, "")
  const notDir = await rejection(localWorkspace({ directory: file }).acquire(request("f")))
  expectExact(notDir, Error, `Local Workspace "${file}" cannot be materialized`)
  expect(notDir.cause.message).toBe("Local Workspace materialization must be a directory")
})

test("a pre-aborted acquisition rethrows the reason without locking", async () => {
  const controller = new AbortController()
  const reason = new Error("stop")
  controller.abort(reason)
  expect(await rejection(localWorkspace({ directory }).acquire({ evaluationId: "e", id: "a", signal: controller.signal }))).toBe(reason)
  expect(existsSync(`${directory}.lock`)).toBe(false)
})
