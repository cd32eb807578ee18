// TST-4 InMemoryWorkspaceStorageAdapter: recorded operations, keys, text, conditions,
// memory-N versions, the lock.
import { expect, test } from "vitest"

import { WorkspaceConflictError } from "@aml-jsx/sdk"
import { InMemoryWorkspaceStorageAdapter } from "@aml-jsx/sdk/testing"
import { expectExact, rejection } from "./support/errors.js"

const request = (id: string, lock = true) => ({ evaluationId: "e", id, lock, signal: new AbortController().signal })

async function text(body: AsyncIterable<Uint8Array>) {
  const parts: Uint8Array[] = []
  for await (const chunk of body) parts.push(chunk)
  return Buffer.concat(parts).toString()
}

test("objects, versions, conditions and the operation record", async () => {
  const storage = new InMemoryWorkspaceStorageAdapter()
  expect(storage.name).toBe("memory-workspace-storage")
  const lease = await storage.acquire(request("w"))
  const v1 = await lease.write("b.txt", "one", { condition: { kind: "absent" } })
  expect(v1).toEqual({ value: "memory-1" })
  expectExact(await rejection(lease.write("b.txt", "x", { condition: { kind: "absent" } })), Error, 'Workspace storage condition failed for "b.txt"')
  expectExact(
    await rejection(lease.write("b.txt", "x", { condition: { kind: "version", version: { value: "memory-9" } } })),
    Error,
    'Workspace storage condition failed for "b.txt"',
  )
  const v2 = await lease.write("b.txt", new TextEncoder().encode("two"), { condition: { kind: "version", version: v1 } })
  expect(v2.value).toBe("memory-2")
  async function* chunks() {
    yield new TextEncoder().encode("a")
    yield new TextEncoder().encode("b")
  }
  await lease.write("a/c.txt", chunks())
  const object = await lease.read("b.txt")
  expect(object!.version).toEqual({ value: "memory-2" })
  expect(await text(object!.body)).toBe("two")
  expect(await lease.read("nope")).toBeUndefined()
  expect(await lease.list("a/")).toEqual([{ path: "a/c.txt" }])
  expect(storage.keys("w")).toEqual(["a/c.txt", "b.txt"])
  expect(await storage.text("w", "a/c.txt")).toBe("ab")
  await lease.delete(["a/c.txt"])
  expect(storage.keys("w")).toEqual(["b.txt"])
  await lease.release()
  expect(storage.operations.map((op) => [op.kind, op.path ?? null])).toEqual([
    ["write", "b.txt"],
    ["write", "b.txt"],
    ["write", "b.txt"],
    ["write", "b.txt"],
    ["write", "a/c.txt"],
    ["read", "b.txt"],
    ["read", "nope"],
    ["list", "a/"],
    ["delete", "a/c.txt"],
    ["release", null],
  ])
  expect(storage.operations.every((op) => op.workspaceId === "w" && Object.isFrozen(op))).toBe(true)
})

test("one locked lease per identity; unlocked leases do not count", async () => {
  const storage = new InMemoryWorkspaceStorageAdapter()
  const held = await storage.acquire(request("w"))
  const conflict = await rejection(storage.acquire(request("w")))
  expect(conflict).toBeInstanceOf(WorkspaceConflictError)
  expect(WorkspaceConflictError.is(conflict, "w")).toBe(true)
  const unlocked = await storage.acquire(request("w", false))
  await unlocked.release()
  await held.release()
  await (await storage.acquire(request("w"))).release()
})
