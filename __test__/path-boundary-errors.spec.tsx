// Issue 22 item 9: errors at the boundary are clear. A NUL byte in a path is refused with the
// other path rules (before, a write failure: `<File> could not write … path cannot contain NUL
// bytes`); a failure inside a Sandbox guest never carries the guest shell's text.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { AmlRuntime, File, Include, localWorkspace, Sandbox, Workspace } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { expectEvaluationError } from "./support/errors.js"

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "aml-path-errors-"))
})
afterEach(async () => {
  await rm(dir, { force: true, recursive: true })
})

/** A guest whose every command prints shell text on stderr and exits `code`. */
function shellFailure(code: number) {
  return new DeterministicSandboxProvider({
    spawn: async () => ({
      id: "p",
      stdin: new WritableStream(),
      stdout: new ReadableStream({ start: (c) => c.close() }),
      stderr: new ReadableStream({
        start: (c) => {
          c.enqueue(new TextEncoder().encode("mv: cannot stat '/workspace/.aml-file-1.tmp': No such file or directory\n"))
          c.close()
        },
      }),
      kill: async () => {},
      wait: async () => ({ exitCode: code }),
    }),
  })
}

function messages(error: any): string[] {
  const found: string[] = []
  for (let e = error; e instanceof Error; e = (e as any).cause) found.push(e.message)
  return found
}

describe("a NUL byte in a path", () => {
  for (const path of ["a\0b", "d/\0", "\0"]) {
    test(`<File path=${JSON.stringify(path)}> is refused as a path, in a Workspace and in a Sandbox`, async () => {
      const rt = new AmlRuntime({ workspaceProvider: localWorkspace({ directory: dir }) })
      const error = await expectEvaluationError(
        rt.evaluate(<Workspace id="w"><File path={path}>x</File></Workspace>),
        "<File> path cannot contain NUL bytes",
      )
      expect(error.cause).toBeUndefined()
      await expectEvaluationError(
        new AmlRuntime({ sandboxProvider: shellFailure(0) }).evaluate(<Sandbox access="read-write"><File path={path}>x</File></Sandbox>),
        "<File> path cannot contain NUL bytes",
      )
    })

    test(`<Include path=${JSON.stringify(path)}> is refused as a path`, async () => {
      await expectEvaluationError(
        new AmlRuntime({ sandboxProvider: shellFailure(0) }).evaluate(<Sandbox><Include path={path} /></Sandbox>),
        "<Include> path cannot contain NUL bytes",
      )
    })
  }
})

describe("a failing guest file command", () => {
  test.each([1, 2, 127])("exit %i: the error names the operation and the exit code, never the shell's text", async (code) => {
    const rt = new AmlRuntime({ sandboxProvider: shellFailure(code) })
    const write = await expectEvaluationError(
      rt.evaluate(<Sandbox access="read-write"><File path="notes.txt">x</File></Sandbox>),
      '<File> could not write "notes.txt"',
    )
    expect(messages(write).slice(1)).toEqual([`guest file operation failed with exit code ${code}`])
    const read = await expectEvaluationError(
      rt.evaluate(<Sandbox><Include path="notes.txt" /></Sandbox>),
      '<Include> could not read "notes.txt"',
    )
    expect(messages(read).slice(1)).toEqual([`guest file operation failed with exit code ${code}`])
    for (const text of [...messages(write), ...messages(read)]) expect(text).not.toContain("mv:")
  })
})
