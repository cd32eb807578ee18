// One "normalized string" rule on both sides of the binding: JavaScript's trim, whose white
// space includes U+FEFF but not U+0085 (Rust's `trim` is the other way round). A revision id
// with either character is judged alike by the <Workspace> props (JS) and by the stored
// index's parser (crates/aml-workspace, Rust): before they shared the rule, an id with U+0085
// passed the props and made the stored index unreadable.
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, test } from "vitest"

import {
  AmlRuntime,
  File,
  FilesystemWorkspaceStorage,
  Include,
  Sandbox,
  Workspace,
  createPersistentWorkspaceProvider,
  localSandbox,
} from "@aml-jsx/sdk"

import { isNormalized } from "../lib/checks/normalized.js"

const made: string[] = []
afterEach(async () => {
  await Promise.all(made.splice(0).map((directory) => rm(directory, { force: true, recursive: true })))
})

/** A saved Workspace `w` whose one revision is renamed to `prefix + <its id>`; returns the runtime and the id. */
async function savedWithRevision(prefix: string) {
  const directory = await mkdtemp(join(tmpdir(), "aml-normalized-"))
  made.push(directory)
  const runtime = new AmlRuntime({
    sandboxProvider: localSandbox(),
    workspaceProvider: createPersistentWorkspaceProvider({ storage: new FilesystemWorkspaceStorage({ directory }) }),
  })
  await runtime.evaluate(
    <Workspace id="w" load={false} save>
      <File path="a.txt">hello</File>
    </Workspace>,
  )
  const indexPath = join(directory, "w/workspace.json")
  const index = JSON.parse(await readFile(indexPath, "utf8"))
  const [revision] = index.revisions
  const id = prefix + revision.id
  const path = `revisions/${id}.tar.gz`
  await rename(join(directory, "w", revision.path), join(directory, "w", path))
  Object.assign(revision, { id, path })
  index.current = id
  await writeFile(indexPath, JSON.stringify(index))
  return { id, runtime }
}

const read = (revision: string) => (
  <Workspace id="w" load={{ revision }} save={false}>
    <Sandbox>
      <Include path="a.txt" />
    </Sandbox>
  </Workspace>
)

test("U+0085 is not white space on either side: the revision id is accepted and loads", async () => {
  const { id, runtime } = await savedWithRevision("\u0085")
  expect(isNormalized(id)).toBe(true)
  expect(await runtime.evaluate(read(id))).toBe("hello")
})

test("U+FEFF is white space on both sides: the props refuse the id, and so does the stored index", async () => {
  const { id, runtime } = await savedWithRevision("\uFEFF")
  expect(isNormalized(id)).toBe(false)
  await expect(runtime.evaluate(read(id))).rejects.toThrow(
    "<Workspace> load revision must be a non-empty normalized string",
  )
  // The latest revision, read through the stored index alone: Rust finds the index invalid.
  const error = await runtime
    .evaluate(
      <Workspace id="w" save={false}>
        <Sandbox>
          <Include path="a.txt" />
        </Sandbox>
      </Workspace>,
    )
    .then(
      () => undefined,
      (reason: Error) => reason,
    )
  expect(error?.message).toBe('Workspace provider "filesystem" failed to acquire')
  expect((error?.cause as Error | undefined)?.message).toBe("Workspace index contains an invalid revision")
})
