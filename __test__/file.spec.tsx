// <File> (INVENTORY FL-1 and docs-next): the documented checks in order, atomic confined
// writes into the Workspace materialization, the symlink and non-directory parent rules,
// `src`, authored order, guest writes through a read-write Sandbox, and the `file` span.
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, File, localSandbox, Parallel, Sandbox, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider, DeterministicWorkspaceProvider } from "@aml-jsx/sdk/testing"

import { until } from "./support/async.js"
import { expectEvaluationError, expectExact, rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"
import { directoryWorkspace, scratch } from "./support/workspace.js"

let dir: { directory: string; cleanup: () => Promise<void> }
let outside: { directory: string; cleanup: () => Promise<void> }
beforeEach(async () => {
  dir = await scratch()
  outside = await scratch()
})
afterEach(async () => {
  await dir.cleanup()
  await outside.cleanup()
})

const runtimeFor = (directory: string, extra: Record<string, unknown> = {}) =>
  new AmlRuntime({ workspaceProvider: directoryWorkspace(directory).provider, ...extra })

describe("checks before children, in the documented order", () => {
  test("each message", async () => {
    const runtime = runtimeFor(dir.directory)
    const cases: [any, string][] = [
      [<File path="a.txt">x</File>, "<File> requires an enclosing <Workspace> or <Sandbox>"],
      [<Workspace><File path="a.txt" src="x.txt">x</File></Workspace>, "<File> accepts children or src, not both"],
      [<Workspace><File path="a.txt" /></Workspace>, "<File> requires children or src"],
      [<Workspace><File path="a.txt" src="" /></Workspace>, "<File> src must be a non-empty local path"],
      [<Workspace><File path={"" as string}>x</File></Workspace>, "<File> path must be a non-empty string"],
      [<Workspace><File path="/etc/x">x</File></Workspace>, "<File> path must be a relative forward-slash path"],
      [<Workspace><File path="a\\b">x</File></Workspace>, "<File> path must be a relative forward-slash path"],
      [<Workspace><File path="a/../b">x</File></Workspace>, "<File> path cannot contain parent traversal"],
      [<Workspace><File path=".">x</File></Workspace>, "<File> path must identify a file"],
      [<Workspace><File path="reports/">x</File></Workspace>, "<File> path must identify a file"],
    ]
    for (const [tree, message] of cases) await expectEvaluationError(runtime.evaluate(tree), message)
    expect(await readdir(dir.directory)).toEqual([])
  })

  test("a read-only Sandbox rejects writes before children run", async () => {
    let ran = false
    const Child = () => {
      ran = true
      return "x"
    }
    const runtime = new AmlRuntime({ sandboxProvider: new DeterministicSandboxProvider() })
    await expectEvaluationError(
      runtime.evaluate(<Sandbox><File path="a.txt"><Child /></File></Sandbox>),
      "<File> cannot write inside a read-only <Sandbox>",
    )
    expect(ran).toBe(false)
  })
})

describe("host writes into the Workspace materialization", () => {
  test("creates parents, writes atomically, contributes no text", async () => {
    const runtime = runtimeFor(dir.directory)
    await expect(
      runtime.evaluate(<Workspace>before<File path="reports/2026/summary.md">Review completed.</File>after</Workspace>),
    ).resolves.toBe("beforeafter")
    expect(await readFile(join(dir.directory, "reports/2026/summary.md"), "utf8")).toBe("Review completed.")
    expect(await readdir(join(dir.directory, "reports/2026"))).toEqual(["summary.md"])
    // Replacing, and empty content.
    await runtime.evaluate(<Workspace><File path="reports/2026/summary.md">{""}</File></Workspace>)
    expect(await readFile(join(dir.directory, "reports/2026/summary.md"), "utf8")).toBe("")
  })

  test("a File inside an Agent writes the inner Agent's result before the outer Agent runs", async () => {
    const prompts: string[] = []
    const agentProvider = new DeterministicAgentProvider({
      respond: async (request) => {
        prompts.push(request.prompt)
        if (request.prompt === "Produce the report.") return { text: "REPORT" }
        return { text: await readFile(join(dir.directory, "report.md"), "utf8") }
      },
    })
    const runtime = runtimeFor(dir.directory, { agentProvider })
    await expect(
      runtime.evaluate(
        <Workspace>
          <Agent>
            <File path="report.md"><Agent>Produce the report.</Agent></File>
            Read report.md and act on its findings.
          </Agent>
        </Workspace>,
      ),
    ).resolves.toBe("REPORT")
    // The File contributes no duplicate content to the outer prompt.
    expect(prompts[1]).toBe("Read report.md and act on its findings.")
  })

  test("symlinked and non-directory parents are refused; nothing is written outside", async () => {
    await symlink(outside.directory, join(dir.directory, "out"))
    await writeFile(join(dir.directory, "plain"), "keep")
    const runtime = runtimeFor(dir.directory)
    await expectEvaluationError(
      runtime.evaluate(<Workspace><File path="out/x.txt">x</File></Workspace>),
      '<File> parent "out" is not a directory',
    )
    await expectEvaluationError(
      runtime.evaluate(<Workspace><File path="plain/x.txt">x</File></Workspace>),
      '<File> parent "plain" is not a directory',
    )
    expect(await readdir(outside.directory)).toEqual([])
  })

  test("a symlink or directory destination is refused", async () => {
    await writeFile(join(outside.directory, "secret"), "secret")
    await symlink(join(outside.directory, "secret"), join(dir.directory, "link"))
    await mkdir(join(dir.directory, "folder"))
    const runtime = runtimeFor(dir.directory)
    for (const path of ["link", "folder"]) {
      await expectEvaluationError(
        runtime.evaluate(<Workspace><File path={path}>x</File></Workspace>),
        "<File> destination must be a regular file",
      )
    }
    expect(await readFile(join(outside.directory, "secret"), "utf8")).toBe("secret")
    expect((await lstat(join(dir.directory, "link"))).isSymbolicLink()).toBe(true)
    expect((await readdir(dir.directory)).sort()).toEqual(["folder", "link"])
  })

  test("other failures name the path and carry the cause", async () => {
    // The materialization directory does not exist.
    const runtime = runtimeFor(join(dir.directory, "missing"))
    const error = await expectEvaluationError(
      runtime.evaluate(<Workspace><File path="a.txt">x</File></Workspace>),
      '<File> could not write "a.txt"',
    )
    expect(error.cause.code).toBe("ENOENT")
  })

  test("src replaces the file with an application file read from the runtime cwd", async () => {
    await writeFile(join(outside.directory, "template.md"), "# Template\n")
    const runtime = runtimeFor(dir.directory, { cwd: outside.directory })
    await runtime.evaluate(<Workspace><File path="docs/t.md" src="template.md" /></Workspace>)
    expect(await readFile(join(dir.directory, "docs/t.md"), "utf8")).toBe("# Template\n")
    const error = await expectEvaluationError(
      runtime.evaluate(<Workspace><File path="x.md" src="missing.md" /></Workspace>),
      `<File> could not read local file "${join(outside.directory, "missing.md")}"`,
    )
    expect(error.cause.code).toBe("ENOENT")
    await writeFile(join(outside.directory, "binary"), Buffer.from([0xff, 0xfe]))
    await expectEvaluationError(
      runtime.evaluate(<Workspace><File path="x.md" src="binary" /></Workspace>),
      `<File> src "${join(outside.directory, "binary")}" is not valid UTF-8`,
    )
  })
})

describe("guest writes through a read-write Sandbox", () => {
  test("the Sandbox guest wins over the Workspace: localSandbox writes into its root", async () => {
    await mkdir(join(dir.directory, "pkg"))
    const runtime = runtimeFor(dir.directory, { sandboxProvider: localSandbox() })
    await runtime.evaluate(
      <Workspace>
        <Sandbox access="read-write" root="pkg">
          <File path="notes/out.md">from the guest</File>
        </Sandbox>
      </Workspace>,
    )
    expect(await readFile(join(dir.directory, "pkg/notes/out.md"), "utf8")).toBe("from the guest")
    expect(await readdir(join(dir.directory, "pkg/notes"))).toEqual(["out.md"])
    // Segments that look like options are still paths.
    await runtime.evaluate(
      <Workspace><Sandbox access="read-write"><File path="-n/-f.md">dashes</File></Sandbox></Workspace>,
    )
    expect(await readFile(join(dir.directory, "-n/-f.md"), "utf8")).toBe("dashes")
  })

  test("guest parent and destination rules", async () => {
    await symlink(outside.directory, join(dir.directory, "out"))
    await mkdir(join(dir.directory, "folder"))
    const runtime = runtimeFor(dir.directory, { sandboxProvider: localSandbox() })
    const inSandbox = (path: string) => (
      <Workspace><Sandbox access="read-write"><File path={path}>x</File></Sandbox></Workspace>
    )
    await expectEvaluationError(runtime.evaluate(inSandbox("out/x.txt")), '<File> parent "out" is not a directory')
    await expectEvaluationError(runtime.evaluate(inSandbox("folder")), "<File> destination must be a regular file")
    expect(await readdir(outside.directory)).toEqual([])
  })

  test("the write goes through runtime.spawn with the content on stdin", async () => {
    const spawned: any[] = []
    const sandboxProvider = new DeterministicSandboxProvider({
      spawn: async (command, args, options) => {
        spawned.push({ command, args, options })
        const chunks: Uint8Array[] = []
        return {
          id: "p",
          stdin: new WritableStream({ write: (chunk) => void chunks.push(chunk) }),
          stdout: new ReadableStream({ start: (c) => c.close() }),
          stderr: new ReadableStream({ start: (c) => c.close() }),
          kill: async () => {},
          wait: async () => {
            spawned.at(-1).input = Buffer.concat(chunks).toString("utf8")
            return { exitCode: 0 }
          },
        }
      },
    })
    await new AmlRuntime({ sandboxProvider }).evaluate(
      <Sandbox access="read-write" root="sub"><File path="a/b.md">guest text</File></Sandbox>,
    )
    expect(spawned).toHaveLength(1)
    expect(spawned[0].command).toBe("sh")
    expect(spawned[0].args.slice(2, 4)).toEqual(["aml-file", "a/b.md"])
    expect(spawned[0].options.cwd).toBe("sub")
    expect(spawned[0].input).toBe("guest text")
  })
})

test("an abort during the write rejects with the reason, unwrapped", async () => {
  const controller = new AbortController()
  const reason = new Error("stop")
  const sandboxProvider = new DeterministicSandboxProvider({
    spawn: async () => {
      controller.abort(reason)
      return {
        id: "p",
        stdin: new WritableStream(),
        stdout: new ReadableStream({ start: (c) => c.close() }),
        stderr: new ReadableStream({ start: (c) => c.close() }),
        kill: async () => {},
        wait: () => new Promise(() => {}),
      }
    },
  })
  const error = await rejection(
    new AmlRuntime({ sandboxProvider }).evaluate(<Sandbox access="read-write"><File path="a">x</File></Sandbox>, {
      signal: controller.signal,
    }),
  )
  expect(error).toBe(reason)
  expect(sandboxProvider.releases).toHaveLength(1)
})

test("span: kind file, name File, path in start and end attributes", async () => {
  const runtime = runtimeFor(dir.directory)
  const events = traced(runtime, false)
  await runtime.evaluate(<Workspace><File path="./docs//a.md">x</File></Workspace>)
  const start = events.find((e) => e.type === "span.start" && e.kind === "file")
  expect(start).toMatchObject({ name: "File", attributes: { path: "docs/a.md" } })
  expect(start.spanId).toMatch(/^span-\d+$/)
  const end = events.find((e) => e.type === "span.end" && e.spanId === start.spanId)
  expect(end).toMatchObject({ status: "ok", attributes: { path: "docs/a.md" } })
})

test("serial writeConcurrency: a host File waits for a writable Sandbox sibling's permit", async () => {
  const order: string[] = []
  let releaseSandbox: (() => void) | undefined
  const sandboxProvider = new DeterministicSandboxProvider({
    release: () =>
      new Promise<void>((resolve) => {
        releaseSandbox = () => {
          order.push("sandbox released")
          resolve()
        }
      }),
  })
  const runtime = runtimeFor(dir.directory, { sandboxProvider })
  const pending = runtime.evaluate(
    <Workspace>
      <Parallel>
        <Sandbox access="read-write">s</Sandbox>
        <File path="a.txt">x</File>
      </Parallel>
    </Workspace>,
  )
  await until(() => releaseSandbox !== undefined, "the Sandbox release")
  // The File cannot have written while the Sandbox holds the permit.
  await expect(readdir(dir.directory)).resolves.toEqual([])
  releaseSandbox!()
  await pending
  expect(await readFile(join(dir.directory, "a.txt"), "utf8")).toBe("x")
  expect(order).toEqual(["sandbox released"])
})

test("a File error is an EvaluationError (class check)", async () => {
  const error = await rejection(new AmlRuntime().evaluate(<File path="a">x</File>))
  expectExact(error, EvaluationError, "<File> requires an enclosing <Workspace> or <Sandbox>")
})

test("DeterministicWorkspaceProvider's directory is used as the File root", async () => {
  const workspaceProvider = new DeterministicWorkspaceProvider({ directory: dir.directory })
  await new AmlRuntime({ workspaceProvider }).evaluate(<Workspace><File path="x.md">y</File></Workspace>)
  expect(await readFile(join(dir.directory, "x.md"), "utf8")).toBe("y")
})
