// Issue 22 items 7 and 9: reads are bounded before they allocate, and a Workspace id too long
// for the filesystem store's file names is refused up front with the limit in the message.
// A sparse file just over the read limit costs no disk; the host path refuses it from its
// size, the guest script's output is cut at the limit while streaming.
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import {
  AmlRuntime,
  EvaluationError,
  filesystemWorkspace,
  Include,
  Sandbox,
  Workspace,
  workspaceStorageSegment,
} from "@aml-jsx/sdk"

import { sandboxRuntime } from "./support/sandbox-paths.js"

const LIMIT = 256 * 1024 * 1024

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "aml-read-limits-"))
})
afterEach(async () => {
  await rm(root, { force: true, recursive: true })
})

async function sparse(path: string, size: number) {
  const file = await open(path, "w")
  await file.truncate(size)
  await file.close()
}


async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error("expected a rejection")
}

describe.each(["host", "guest"] as const)("Include in a Sandbox (%s file path)", (path) => {
  test("a file over the read limit is refused, one at the limit is read", async () => {
    await sparse(join(root, "big.bin"), LIMIT + 1)
    const error = await rejection(sandboxRuntime(path, root).evaluate(<Sandbox access="read-write"><Include path="big.bin" /></Sandbox>))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('<Include> could not read "big.bin"')
    expect((error.cause as Error).message).toBe(`file is larger than ${LIMIT} bytes`)
  }, 60_000)
})

describe("filesystemWorkspace ids", () => {
  test("an id whose storage segment exceeds 200 bytes is refused up front, naming the limit", async () => {
    const rt = new AmlRuntime({ workspaceProvider: filesystemWorkspace({ directory: root }) })
    const id = "é".repeat(40) // 240 bytes once encoded
    expect(workspaceStorageSegment(id)).toHaveLength(240)
    const error = await rejection(rt.evaluate(<Workspace id={id}>x</Workspace>))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('Workspace provider "filesystem" failed to acquire')
    expect((error.cause as Error).message).toBe(
      `Filesystem Workspace "${id}" id is too long: its storage segment is 240 bytes, at most 200 fit the store's file names`,
    )
  })

  test("an id of exactly 200 segment bytes is saved and acquired again", async () => {
    const rt = new AmlRuntime({ workspaceProvider: filesystemWorkspace({ directory: root }) })
    const id = "w".repeat(200)
    expect(await rt.evaluate(<Workspace id={id}>first</Workspace>)).toBe("first")
    expect(await rt.evaluate(<Workspace id={id}>again</Workspace>)).toBe("again")
  })
})
