// A Workspace save that runs out of disk space (issue 38 §3) names the Workspace and says that
// nothing was published, and the previous revision stays current. The full disk is real: the
// materializations live on a 1 MiB tmpfs (hence the `root` test group, for `mount`), the store
// on the ordinary disk, and the second run writes a file that fits the tmpfs while its archive
// does not fit beside it.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, describe, expect } from "vitest"

import { AmlRuntime, File, Include, Workspace, filesystemWorkspace, workspaceStorageSegment } from "@aml-jsx/sdk"
import { rejection } from "./support/errors.js"
import { hasGroup, testNeeding } from "./support/test-groups.js"

const test = testNeeding("root")
const ID = "disk-full"

let base = ""
let tmpfs = ""
let mounted = false

beforeAll(() => {
  if (!hasGroup("root")) return
  base = mkdtempSync(join(tmpdir(), "aml-disk-full-"))
  tmpfs = join(base, "tmpfs")
  execFileSync("mkdir", [tmpfs])
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", tmpfs])
  mounted = true
})

afterAll(() => {
  if (mounted) execFileSync("umount", [tmpfs])
  if (base !== "") rmSync(base, { force: true, recursive: true })
})

/** The error in `error`'s cause chain whose message names the Workspace, if any. */
function savingError(error: any): any {
  for (let at = error; at !== undefined && at !== null; at = at.cause) {
    if (typeof at.message === "string" && at.message.startsWith(`Workspace "${ID}" was not saved`)) return at
  }
  return undefined
}

describe("a Workspace save on a full disk", () => {
  test("names the Workspace, keeps ENOSPC as the code, publishes nothing; the last revision is still current", async () => {
    const store = join(base, "store")
    const provider = filesystemWorkspace({ directory: store, temporaryDirectory: tmpfs })
    const runtime = new AmlRuntime()
    const index = join(store, workspaceStorageSegment(ID), "workspace.json")

    await runtime.evaluate(
      <Workspace id={ID} provider={provider} save>
        <File path="note.txt">first revision</File>
      </Workspace>,
    )
    const published = readFileSync(index, "utf8")

    // ~700 KB of text that gzip cannot shrink much: the materialization fits in 1 MiB, the
    // staged archive beside it does not.
    const bulk = randomBytes(520 * 1024).toString("base64")
    const error = await rejection(
      runtime.evaluate(
        <Workspace id={ID} provider={provider} save>
          <File path="note.txt">second revision</File>
          <File path="bulk.txt">{bulk}</File>
        </Workspace>,
      ),
    )
    const saving = savingError(error)
    expect(saving?.message).toBe(`Workspace "${ID}" was not saved: no space left on device (ENOSPC); nothing was published and its current revision is unchanged`)
    expect(saving.code).toBe("ENOSPC")
    // The cause still says where it happened.
    expect(saving.cause.message).toMatch(/^ENOSPC: no space left on device, \w+ '/)

    expect(readFileSync(index, "utf8")).toBe(published)
    const restored = await runtime.evaluate(
      <Workspace id={ID} provider={provider}>
        <Include path="note.txt" />
      </Workspace>,
    )
    expect(restored).toContain("first revision")
  })
})
