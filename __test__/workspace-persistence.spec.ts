// WP-1/WP-2/BW-2: createPersistentWorkspaceProvider and WorkspacePersistence over the native
// filesystem store, over JS adapters (InMemoryWorkspaceStorageAdapter and a custom one), and
// FilesystemWorkspaceStorage used as a plain adapter.
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from "node:fs/promises"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, describe, expect, test } from "vitest"

import {
  FilesystemWorkspaceStorage,
  WorkspaceConflictError,
  WorkspacePersistence,
  createPersistentWorkspaceProvider,
  filesystemWorkspace,
  workspaceStorageSegment,
} from "@aml-jsx/sdk"
import { InMemoryWorkspaceStorageAdapter } from "@aml-jsx/sdk/testing"
import { expectExact, rejection } from "./support/errors.js"

let root: string
let tmp: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "aml-persist-"))
  tmp = join(root, "tmp")
  await mkdir(tmp)
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const signal = new AbortController().signal
const request = (id: string, extra: Record<string, unknown> = {}) => ({ evaluationId: "e", id, signal, ...extra })
const saveRequest = (extra: Record<string, unknown> = {}) => ({
  exclude: [],
  gitignore: true,
  outcome: "success" as const,
  retention: 3,
  signal,
  ...extra,
})

describe("createPersistentWorkspaceProvider options", () => {
  const storage = new InMemoryWorkspaceStorageAdapter()
  test("every option error, in order", () => {
    expectExact(catching(() => createPersistentWorkspaceProvider(null as never)), TypeError, "Workspace persistence options must be an object")
    expectExact(catching(() => createPersistentWorkspaceProvider({} as never)), TypeError, "Workspace persistence storage must be a valid adapter")
    expectExact(
      catching(() => createPersistentWorkspaceProvider({ storage: { name: " x", acquire() {} } } as never)),
      TypeError,
      "Workspace persistence storage must be a valid adapter",
    )
    expectExact(
      catching(() => createPersistentWorkspaceProvider({ storage, format: "zip" } as never)),
      TypeError,
      'Workspace persistence format must be "archive" or "folder"',
    )
    for (const label of ["maxArchiveBytes", "maxEntries", "maxExtractedBytes"]) {
      for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, "1"]) {
        expectExact(
          catching(() => createPersistentWorkspaceProvider({ storage, [label]: bad } as never)),
          RangeError,
          `Workspace persistence ${label} must be a positive safe integer`,
        )
      }
    }
  })

  test("the provider is frozen and named after its storage", () => {
    const provider = createPersistentWorkspaceProvider({ storage })
    expect(Object.isFrozen(provider)).toBe(true)
    expect(provider.name).toBe("memory-workspace-storage")
    expect(new WorkspacePersistence({ storage }).name).toBe("memory-workspace-storage")
  })
})

function catching(run: () => unknown): any {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

for (const format of ["archive", "folder"] as const) {
  describe(`filesystemWorkspace (${format})`, () => {
    test("save, restore, retention, conflict", async () => {
      const directory = join(root, `store-${format}`)
      const provider = filesystemWorkspace({ directory, format, temporaryDirectory: tmp })
      expect(provider.name).toBe("filesystem")
      const first = await provider.acquire(request("review-42", { load: { exclude: [], revision: "current" }, lock: true }))
      expect(first.id).toMatch(/^filesystem-[0-9a-f-]{36}$/)
      expect(first.handle).toEqual({
        format,
        kind: "persistent-workspace",
        storage: { directory: join(directory, "review-42"), kind: "filesystem-workspace" },
      })
      expect(Object.isFrozen(first.handle)).toBe(true)
      expect(first.directory.startsWith(join(tmp, "aml-workspace-"))).toBe(true)
      expect(first.directory.endsWith("/workspace")).toBe(true)
      const conflict = await rejection(provider.acquire(request("review-42")))
      expect(conflict).toBeInstanceOf(WorkspaceConflictError)
      expect(WorkspaceConflictError.is(conflict, "review-42")).toBe(true)

      await mkdir(join(first.directory, "reports"))
      await writeFile(join(first.directory, "reports/summary.md"), "done")
      await writeFile(join(first.directory, ".gitignore"), "*.log\n")
      await writeFile(join(first.directory, "debug.log"), "noise")
      await first.save(saveRequest())
      await first.save(saveRequest())
      await first.release()
      await first.release()
      expect(existsSync(first.directory)).toBe(false)

      const index = JSON.parse(await readFile(join(directory, "review-42/workspace.json"), "utf8"))
      expect(index.version).toBe(1)
      expect(index.revisions).toHaveLength(2)
      expect(index.current).toBe(index.revisions[0].id)
      for (const revision of index.revisions) {
        expect(new Date(revision.createdAt).toISOString()).toBe(revision.createdAt)
        expect(revision.format).toBe(format)
      }

      const second = await provider.acquire(request("review-42"))
      expect(second.handle).toMatchObject({ revisionId: index.current })
      expect(await readFile(join(second.directory, "reports/summary.md"), "utf8")).toBe("done")
      expect(existsSync(join(second.directory, "debug.log"))).toBe(false)
      await second.release()
    })
  })
}

test("a stale unlocked writer loses with the conditional-write error and no orphan", async () => {
  const directory = join(root, "stale")
  const provider = filesystemWorkspace({ directory, temporaryDirectory: tmp })
  const a = await provider.acquire(request("w", { lock: false }))
  const b = await provider.acquire(request("w", { lock: false }))
  await a.save(saveRequest())
  expectExact(await rejection(b.save(saveRequest())), Error, "Filesystem Workspace conditional write failed")
  expect(await readdir(join(directory, "w/revisions"))).toHaveLength(1)
  await Promise.all([a.release(), b.release()])
})

test("restore errors: a missing named revision, a corrupt index", async () => {
  const directory = join(root, "broken")
  const provider = filesystemWorkspace({ directory, temporaryDirectory: tmp })
  const missing = await rejection(provider.acquire(request("w", { load: { exclude: [], revision: "nope" } })))
  expectExact(missing, Error, 'Workspace revision "nope" does not exist')
  await mkdir(join(directory, "w"), { recursive: true })
  await writeFile(join(directory, "w/workspace.json"), "{")
  expectExact(await rejection(provider.acquire(request("w"))), Error, "Workspace index is not valid JSON")
  // load={false} still reads (and validates) the index it will publish against.
  expectExact(await rejection(provider.acquire(request("w", { load: false }))), Error, "Workspace index is not valid JSON")
  expect(await readdir(tmp)).toEqual([])
})

test("selection errors surface with their exact messages", async () => {
  const provider = filesystemWorkspace({ directory: join(root, "links"), temporaryDirectory: tmp, maxEntries: 2 })
  const lease = await provider.acquire(request("w"))
  const { symlink } = await import("node:fs/promises")
  await symlink("/etc/hostname", join(lease.directory, "link"))
  expectExact(await rejection(lease.save(saveRequest())), Error, 'Workspace selection contains unsupported symbolic link "link"')
  await rm(join(lease.directory, "link"))
  for (const name of ["a", "b", "c"]) await writeFile(join(lease.directory, name), name)
  expectExact(await rejection(lease.save(saveRequest())), RangeError, "Workspace snapshot exceeded 2 entries")
  await lease.release()
})

test("maxEntries counts the archive's root entry, and a refused save writes nothing", async () => {
  for (const format of ["archive", "folder"] as const) {
    const storage = new InMemoryWorkspaceStorageAdapter()
    const provider = createPersistentWorkspaceProvider({ storage, format, maxEntries: 2, temporaryDirectory: tmp })
    const first = await provider.acquire(request(`root-entry-${format}`))
    await writeFile(join(first.directory, "one.txt"), "1")
    await first.save(saveRequest())
    await first.release()
    const stored = storage.keys(`root-entry-${format}`)

    const second = await provider.acquire(request(`root-entry-${format}`))
    await writeFile(join(second.directory, "two.txt"), "2")
    if (format === "archive") {
      // Two files and the archive's root entry are three entries.
      expectExact(await rejection(second.save(saveRequest())), RangeError, "Workspace snapshot exceeded 2 entries")
      expect(storage.keys(`root-entry-${format}`)).toEqual(stored)
    } else {
      await second.save(saveRequest())
    }
    await second.release()
  }
})

describe("JS storage adapters", () => {
  for (const format of ["archive", "folder"] as const) {
    test(`InMemoryWorkspaceStorageAdapter round trip (${format})`, async () => {
      const storage = new InMemoryWorkspaceStorageAdapter()
      const provider = createPersistentWorkspaceProvider({ storage, format, temporaryDirectory: tmp })
      const lease = await provider.acquire(request("mem"))
      expect(lease.handle).toEqual({
        format,
        kind: "persistent-workspace",
        storage: { kind: "memory-workspace-storage", workspaceId: "mem" },
      })
      await writeFile(join(lease.directory, "a.txt"), "alpha")
      await lease.save(saveRequest())
      await lease.release()
      const index = JSON.parse((await storage.text("mem", "workspace.json"))!)
      const keys = storage.keys("mem")
      expect(keys).toContain("workspace.json")
      if (format === "archive") expect(keys).toContain(`revisions/${index.current}.tar.gz`)
      else expect(keys).toEqual([`revisions/${index.current}/files/a.txt`, `revisions/${index.current}/manifest.json`, "workspace.json"])
      const kinds = storage.operations.map((op) => op.kind)
      expect(kinds[0]).toBe("read")
      expect(kinds.at(-1)).toBe("release")
      expect(storage.operations.filter((op) => op.kind === "release")).toEqual([{ kind: "release", workspaceId: "mem" }])

      const again = await provider.acquire(request("mem"))
      expect(await readFile(join(again.directory, "a.txt"), "utf8")).toBe("alpha")
      await again.release()
    })
  }

  test("the adapter's own errors keep their identity; conflicts and stale publication", async () => {
    const storage = new InMemoryWorkspaceStorageAdapter()
    const provider = createPersistentWorkspaceProvider({ storage, temporaryDirectory: tmp })
    const a = await provider.acquire(request("x", { lock: false }))
    const b = await provider.acquire(request("x", { lock: false }))
    await a.save(saveRequest())
    expectExact(await rejection(b.save(saveRequest())), Error, 'Workspace storage condition failed for "workspace.json"')
    await Promise.all([a.release(), b.release()])
    const held = await provider.acquire(request("y"))
    const conflict = await rejection(provider.acquire(request("y")))
    expect(WorkspaceConflictError.is(conflict, "y")).toBe(true)
    await held.release()

    const thrown = new Error("bucket on fire")
    const failing = {
      name: "failing",
      async acquire() {
        return {
          handle: null,
          async read() {
            throw thrown
          },
          async write() {
            return { value: "v" }
          },
          async list() {
            return []
          },
          async delete() {},
          async release() {
            throw new Error("release failed too")
          },
        }
      },
    }
    const error = await rejection(createPersistentWorkspaceProvider({ storage: failing, temporaryDirectory: tmp }).acquire(request("z")))
    expectExact(error, AggregateError, "Workspace acquisition and cleanup failed")
    expect(error.errors[0]).toBe(thrown)
    expect(error.errors[1].message).toBe("release failed too")
    expect(await readdir(tmp)).toEqual([])
  })

  test("an adapter lease without the storage methods is refused", async () => {
    for (const lease of [null, { read() {} }]) {
      const storage = { name: "odd", acquire: async () => lease }
      const error = await rejection(createPersistentWorkspaceProvider({ storage, temporaryDirectory: tmp }).acquire(request("q")))
      expectExact(error, TypeError, 'Workspace storage "odd" returned an invalid lease')
    }
  })

  test("publication failure deletes the orphan; a failed cleanup aggregates", async () => {
    const storage = new InMemoryWorkspaceStorageAdapter()
    const provider = createPersistentWorkspaceProvider({ storage, temporaryDirectory: tmp })
    const lease = await provider.acquire(request("o", { lock: false }))
    // Someone else publishes first.
    const other = await provider.acquire(request("o", { lock: false }))
    await other.save(saveRequest())
    await other.release()
    const before = storage.keys("o")
    await rejection(lease.save(saveRequest()))
    expect(storage.keys("o")).toEqual(before)
    await lease.release()

    const wrapped = {
      name: "wrapped",
      async acquire(req: any) {
        const inner = await storage.acquire(req)
        return {
          ...inner,
          handle: inner.handle,
          async write(path: string, body: any, options: any) {
            if (path === "workspace.json") throw new Error("publication refused")
            return inner.write(path, body, options)
          },
          async delete() {
            throw new Error("delete refused")
          },
        }
      },
    }
    const failing = await createPersistentWorkspaceProvider({ storage: wrapped, temporaryDirectory: tmp }).acquire(request("p"))
    const error = await rejection(failing.save(saveRequest()))
    expectExact(error, AggregateError, "Workspace save and orphan cleanup failed")
    expect(error.errors.map((e: Error) => e.message)).toEqual(["publication refused", "delete refused"])
    await failing.release()
  })
})

describe("FilesystemWorkspaceStorage as a plain adapter", () => {
  test("options and path errors", async () => {
    expectExact(catching(() => new FilesystemWorkspaceStorage(null as never)), TypeError, "Filesystem Workspace options must be an object")
    expectExact(catching(() => new FilesystemWorkspaceStorage({ directory: " " })), TypeError, "Filesystem Workspace directory must be a non-empty normalized string")
    expectExact(catching(() => filesystemWorkspace({ directory: "" })), TypeError, "Filesystem Workspace directory must be a non-empty normalized string")
    const storage = new FilesystemWorkspaceStorage({ directory: join(root, "plain") })
    expect(storage.name).toBe("filesystem")
    const lease = await storage.acquire(request("id/with slash"))
    expect(lease.handle).toEqual({ directory: join(root, "plain", "id%2Fwith%20slash"), kind: "filesystem-workspace" })
    for (const bad of ["/abs", "a/../b", "a//b", "", "a\\b"]) {
      expectExact(await rejection(lease.read(bad)), Error, `Filesystem Workspace storage path "${bad}" is invalid`)
    }
    const v1 = await lease.write("dir/obj", "hello", { condition: { kind: "absent" } })
    const { createHash } = await import("node:crypto")
    expect(v1.value).toBe(createHash("sha256").update("hello").digest("hex"))
    expectExact(await rejection(lease.write("dir/obj", "x", { condition: { kind: "absent" } })), Error, "Filesystem Workspace conditional write failed")
    expectExact(
      await rejection(lease.write("dir/obj", "x", { condition: { kind: "version", version: { value: "nope" } } })),
      Error,
      "Filesystem Workspace conditional write failed",
    )
    await lease.write("dir/obj", new TextEncoder().encode("world"), { condition: { kind: "version", version: v1 } })
    const object = await lease.read("dir/obj")
    const chunks: Uint8Array[] = []
    for await (const chunk of object!.body) chunks.push(chunk)
    expect(Buffer.concat(chunks).toString()).toBe("world")
    expect(await lease.list("dir/")).toEqual([{ path: "dir/obj" }])
    expect(await lease.read("missing")).toBeUndefined()
    await lease.delete(["dir/obj", "missing"])
    expect(await lease.list("")).toEqual([])
    await lease.release()
  })

  test("wrapped in a JS adapter it runs through the dispatcher", async () => {
    const inner = new FilesystemWorkspaceStorage({ directory: join(root, "wrapped-fs") })
    const storage = { name: "wrapped-fs", acquire: (req: any) => inner.acquire(req) }
    const provider = createPersistentWorkspaceProvider({ storage, format: "folder", temporaryDirectory: tmp })
    const lease = await provider.acquire(request("w"))
    await writeFile(join(lease.directory, "f"), "1")
    await lease.save(saveRequest())
    await lease.release()
    const again = await provider.acquire(request("w"))
    expect(await readFile(join(again.directory, "f"), "utf8")).toBe("1")
    await again.release()
  })
})

test("workspaceStorageSegment", () => {
  expect(workspaceStorageSegment("review-42")).toBe("review-42")
  expect(workspaceStorageSegment("a/b c!'()*")).toBe("a%2Fb%20c%21%27%28%29%2A")
  expect(workspaceStorageSegment(".")).toBe("%2E")
  expect(workspaceStorageSegment("..")).toBe("%2E%2E")
  expect(workspaceStorageSegment("é~")).toBe("%C3%A9~")
  for (const bad of ["", " a", "a ", 1, null]) {
    expectExact(catching(() => workspaceStorageSegment(bad as never)), TypeError, "Workspace storage id must be a non-empty normalized string")
  }
})
