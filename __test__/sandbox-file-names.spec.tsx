// Issue 22 item 3: names a shell treats specially are plain file names inside a Sandbox. Before,
// `<Include path="-">` ran `cat -- -` in the guest and returned the guest's stdin (empty), not
// the file named `-`; a name starting with `-` must not become an option either.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { File, Include, Sandbox } from "@aml-jsx/sdk"

import { sandboxRuntime } from "./support/sandbox-paths.js"

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "aml-sandbox-names-"))
})
afterEach(async () => {
  await rm(root, { force: true, recursive: true })
})


describe.each(["host", "guest"] as const)("%s file path", (path) => {
  test.each(["-", "-n", "--", "d/-", "d/--help"])("Include reads the file named %j", async (name) => {
    await mkdir(join(root, "d"), { recursive: true })
    await writeFile(join(root, name), `content of ${name}\n`)
    const text = await sandboxRuntime(path, root).evaluate(<Sandbox access="read-write"><Include path={name} /></Sandbox>)
    expect(text).toBe(`content of ${name}\n`)
  })

  test.each(["-", "-n", "d/--help"])("File writes the file named %j", async (name) => {
    await sandboxRuntime(path, root).evaluate(<Sandbox access="read-write"><File path={name}>written</File></Sandbox>)
    expect(await readFile(join(root, name), "utf8")).toBe("written")
  })
})
