// Interrupted restores and saves (crates/aml-workspace/src/cancel.rs): an abort observed by
// a storage hook after the first files stops the work; the call rejects with the signal's
// reason, no temporary root, lock or unpublished revision is left, the previous revision
// stays current. Counts of observed calls, never wall time.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterEach, beforeEach, expect, test } from "vitest"

import { AmlRuntime, Workspace, createPersistentWorkspaceProvider } from "@aml-jsx/sdk"
import { InMemoryWorkspaceStorageAdapter } from "@aml-jsx/sdk/testing"
import { rejection } from "./support/errors.js"

const FILES = 40
const CONCURRENCY = 16 // folder revisions move this many objects at once

let tmp: string
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "aml-abort-"))
})
afterEach(() => rm(tmp, { force: true, recursive: true }))

/** Wraps the in-memory adapter; `hook(kind, path)` sees every file object read or written. */
function hooked(inner: InMemoryWorkspaceStorageAdapter) {
  const state = { hook: (_kind: string, _path: string) => {} }
  const adapter = {
    name: inner.name,
    async acquire(request: any) {
      const lease: any = await inner.acquire(request)
      const observe = (kind: string, path: string) => {
        if (path.includes("/files/")) state.hook(kind, path)
      }
      return {
        handle: lease.handle,
        delete: (paths: string[]) => lease.delete(paths),
        list: (prefix: string) => lease.list(prefix),
        read: (path: string) => (observe("read", path), lease.read(path)),
        release: () => lease.release(),
        write: (path: string, body: unknown, options: unknown) => (observe("write", path), lease.write(path, body, options)),
      }
    },
  }
  return { adapter, state }
}

async function seed(provider: any) {
  const signal = new AbortController().signal
  const lease = await provider.acquire({ evaluationId: "e", id: "abort", load: false, lock: true, signal })
  for (let i = 0; i < FILES; i++) {
    await mkdir(join(lease.directory, `src/m${i % 4}`), { recursive: true })
    await writeFile(join(lease.directory, `src/m${i % 4}/f${i}.txt`), `file ${i}`)
  }
  await lease.save({ exclude: [], gitignore: false, outcome: "success", retention: 3, signal })
  await lease.release()
}

function abortOn(state: { hook: (kind: string, path: string) => void }, kind: string, after: number) {
  const controller = new AbortController()
  const reason = new Error("stop the workspace")
  let seen = 0
  state.hook = (observed) => {
    if (observed !== kind) return
    seen++
    if (seen === after) controller.abort(reason)
  }
  return { controller, reason, seen: () => seen }
}

test("a folder restore stops after the files it had started and rejects with the reason", async () => {
  const inner = new InMemoryWorkspaceStorageAdapter()
  const { adapter, state } = hooked(inner)
  const provider = createPersistentWorkspaceProvider({ format: "folder", storage: adapter, temporaryDirectory: tmp })
  await seed(provider)
  const stored = inner.keys("abort")
  const abort = abortOn(state, "read", 3)
  const error = await rejection(
    provider.acquire({ evaluationId: "e", id: "abort", lock: true, signal: abort.controller.signal }),
  )
  expect(error).toBe(abort.reason)
  expect(abort.seen()).toBeLessThanOrEqual(3 + CONCURRENCY)
  expect(abort.seen()).toBeLessThan(FILES)
  expect(await readdir(tmp)).toEqual([]) // the temporary root is gone
  expect(inner.operations.at(-1)).toEqual({ kind: "release", workspaceId: "abort" })
  expect(inner.keys("abort")).toEqual(stored)
  // The lock was released and the revision is whole.
  state.hook = () => {}
  const lease = await provider.acquire({ evaluationId: "e", id: "abort", lock: true, signal: new AbortController().signal })
  expect((await readdir(join(lease.directory, "src/m0"))).length).toBe(FILES / 4)
  await lease.release()
})

test("a folder save stops, removes what it uploaded and leaves the index as it was", async () => {
  const inner = new InMemoryWorkspaceStorageAdapter()
  const { adapter, state } = hooked(inner)
  const provider = createPersistentWorkspaceProvider({ format: "folder", storage: adapter, temporaryDirectory: tmp })
  await seed(provider)
  const stored = inner.keys("abort")
  const index = await inner.text("abort", "workspace.json")
  const lease = await provider.acquire({ evaluationId: "e", id: "abort", lock: true, signal: new AbortController().signal })
  const abort = abortOn(state, "write", 3)
  const request = { exclude: [], gitignore: false, outcome: "success" as const, retention: 3, signal: abort.controller.signal }
  expect(await rejection(lease.save(request))).toBe(abort.reason)
  expect(abort.seen()).toBeLessThanOrEqual(3 + CONCURRENCY)
  expect(inner.keys("abort")).toEqual(stored)
  expect(await inner.text("abort", "workspace.json")).toBe(index)
  // The lease still saves: on top of the revision it restored.
  state.hook = () => {}
  await lease.save({ ...request, signal: new AbortController().signal })
  const published = JSON.parse((await inner.text("abort", "workspace.json"))!)
  expect(published.revisions).toHaveLength(2)
  await lease.release()
  expect(await readdir(tmp)).toEqual([])
})

test("evaluation cancellation during a <Workspace> restore rejects with the reason and leaves nothing", async () => {
  const inner = new InMemoryWorkspaceStorageAdapter()
  const { adapter, state } = hooked(inner)
  const provider = createPersistentWorkspaceProvider({ format: "folder", storage: adapter, temporaryDirectory: tmp })
  await seed(provider)
  const abort = abortOn(state, "read", 2)
  let entered = false
  const Body = () => {
    entered = true
    return "body"
  }
  const error = await rejection(
    new AmlRuntime().evaluate(
      <Workspace id="abort" provider={provider}>
        <Body />
      </Workspace>,
      { signal: abort.controller.signal },
    ),
  )
  expect(error).toBe(abort.reason)
  expect(abort.seen()).toBeLessThanOrEqual(2 + CONCURRENCY) // stopped mid-way, not run to the end
  expect(abort.seen()).toBeLessThan(FILES)
  expect(entered).toBe(false)
  expect(await readdir(tmp)).toEqual([])
  expect(inner.operations.at(-1)).toEqual({ kind: "release", workspaceId: "abort" })
})
