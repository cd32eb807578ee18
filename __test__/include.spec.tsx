// <Include path | src maxBytes> (INVENTORY INC-1, docs-next; decisions in docs/WORKSPACE.md):
// inline UTF-8, the staged file reference above maxBytes inside the containing Agent, the
// nearest active filesystem (Sandbox guest first), errors, and the `include` span.
import { access, mkdir, readFile, symlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Include, Sandbox, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { countLines, stagedInstruction } from "../lib/files/include.js"
import { expectEvaluationError, rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"
import { directoryWorkspace, scratch } from "./support/workspace.js"

let dir: { directory: string; cleanup: () => Promise<void> }
let app: { directory: string; cleanup: () => Promise<void> }
beforeEach(async () => {
  dir = await scratch()
  app = await scratch()
  await mkdir(join(dir.directory, "docs"))
  await writeFile(join(dir.directory, "docs/guide.md"), "line one\nline two\n")
  await writeFile(join(app.directory, "policy.md"), "Be careful.")
})
afterEach(async () => {
  await dir.cleanup()
  await app.cleanup()
})

function runtime(extra: Record<string, unknown> = {}) {
  return new AmlRuntime({ cwd: app.directory, workspaceProvider: directoryWorkspace(dir.directory).provider, ...extra })
}

describe("props and placement", () => {
  test("each message", async () => {
    const rt = runtime()
    const cases: [any, string][] = [
      [<Include src="policy.md">{"x"}</Include>, "<Include> does not accept children"],
      [<Include {...({} as any)} />, "<Include> requires exactly one of path or src"],
      [<Include {...({ path: "a", src: "b" } as any)} />, "<Include> requires exactly one of path or src"],
      [<Include src="policy.md" maxBytes={0} />, "<Include> maxBytes must be a positive safe integer"],
      [<Include src="policy.md" maxBytes={1.5} />, "<Include> maxBytes must be a positive safe integer"],
      [<Include src="" />, "<Include> src must be a non-empty local path"],
      [<Include path="docs/guide.md" />, "<Include path> requires an enclosing <Workspace> or <Sandbox>"],
      [<Workspace><Include path="/etc/passwd" /></Workspace>, "<Include> path must be a relative forward-slash path"],
      [<Workspace><Include path="../x" /></Workspace>, "<Include> path cannot contain parent traversal"],
      [<Workspace><Include path="." /></Workspace>, "<Include> path must identify a file"],
    ]
    for (const [tree, message] of cases) await expectEvaluationError(rt.evaluate(tree), message)
  })
})

describe("inline", () => {
  test("src from the runtime cwd and path from the Workspace are inlined verbatim", async () => {
    const rt = runtime()
    await expect(rt.evaluate(<>[<Include src="policy.md" />]</>)).resolves.toBe("[Be careful.]")
    await expect(rt.evaluate(<Workspace><Include path="docs/guide.md" maxBytes={18} /></Workspace>)).resolves.toBe(
      "line one\nline two\n",
    )
  })

  test("read failures, links and invalid UTF-8", async () => {
    const rt = runtime()
    const missing = await expectEvaluationError(
      rt.evaluate(<Workspace><Include path="docs/missing.md" /></Workspace>),
      '<Include> could not read "docs/missing.md"',
    )
    expect(missing.cause.code).toBe("ENOENT")
    await symlink(app.directory, join(dir.directory, "app"))
    await symlink(join(app.directory, "policy.md"), join(dir.directory, "policy-link.md"))
    await expectEvaluationError(
      rt.evaluate(<Workspace><Include path="app/policy.md" /></Workspace>),
      '<Include> parent "app" is not a directory',
    )
    await expectEvaluationError(
      rt.evaluate(<Workspace><Include path="policy-link.md" /></Workspace>),
      "<Include> path must identify a regular file",
    )
    await writeFile(join(dir.directory, "bin"), Buffer.from([0xc3, 0x28]))
    await expectEvaluationError(rt.evaluate(<Workspace><Include path="bin" /></Workspace>), '<Include> "bin" is not valid UTF-8')
    const src = await expectEvaluationError(
      rt.evaluate(<Include src="nope.md" />),
      `<Include> could not read local file "${join(app.directory, "nope.md")}"`,
    )
    expect(src.cause.code).toBe("ENOENT")
  })

  test("a read-only Sandbox guest is read through the runtime and wins over the Workspace", async () => {
    const spawned: any[] = []
    const sandboxProvider = new DeterministicSandboxProvider({
      spawn: async (command, args, options) => {
        spawned.push({ command, args, options })
        return {
          id: "p",
          stdin: new WritableStream(),
          stdout: new ReadableStream({
            start: (c) => {
              c.enqueue(new TextEncoder().encode("guest content"))
              c.close()
            },
          }),
          stderr: new ReadableStream({ start: (c) => c.close() }),
          kill: async () => {},
          wait: async () => ({ exitCode: 0 }),
        }
      },
    })
    const rt = runtime({ sandboxProvider })
    await expect(
      rt.evaluate(<Workspace><Sandbox root="docs"><Include path="guide.md" /></Sandbox></Workspace>),
    ).resolves.toBe("guest content")
    expect(spawned[0].args.slice(2)).toEqual(["aml-file", "guide.md"])
    expect(spawned[0].options.cwd).toBe("docs")
  })
})

test("localSandbox serves Include reads from the host, so a read-only lease reads without a process", async () => {
  const { localSandbox } = await import("@aml-jsx/sdk")
  const rt = runtime({ sandboxProvider: localSandbox() })
  // Read-only: no process may run (the host cannot enforce it), yet the read needs none.
  await expect(rt.evaluate(<Workspace><Sandbox><Include path="docs/guide.md" /></Sandbox></Workspace>)).resolves.toBe(
    "line one\nline two\n",
  )
  await expect(
    rt.evaluate(<Workspace><Sandbox access="read-write"><Include path="docs/guide.md" /></Sandbox></Workspace>),
  ).resolves.toBe("line one\nline two\n")
})

describe("oversized", () => {
  test("outside an Agent it is an error", async () => {
    await expectEvaluationError(
      runtime().evaluate(<Workspace><Include path="docs/guide.md" maxBytes={4} /></Workspace>),
      "an oversized <Include> requires a containing <Agent>",
    )
  })

  test("inside an Agent: a staged copy for the provider call only, with size and line metadata", async () => {
    const seen: { prompt: string; staged: string; skills: unknown }[] = []
    const agentProvider = new DeterministicAgentProvider({
      respond: async (request) => {
        const staged = /Read it from "([^"]+)"/.exec(request.prompt)![1]
        seen.push({ prompt: request.prompt, staged: await readFile(staged, "utf8"), skills: (request as any).skills })
        return { text: staged }
      },
    })
    const rt = runtime({ agentProvider })
    const stagedPath = await rt.evaluate(
      <Workspace>
        <Agent>
          Summarize:
          <Include path="docs/guide.md" maxBytes={4} />
        </Agent>
      </Workspace>,
    )
    const instruction = stagedInstruction("docs/guide.md", 18, 2, 4, stagedPath)
    expect(seen[0].prompt).toBe(`Summarize:${instruction}`)
    expect(instruction).toBe(
      `The file "docs/guide.md" (18 bytes, 2 lines) exceeds the 4-byte inline limit and was not inlined. Read it from "${stagedPath}" before relying on its content.`,
    )
    expect(seen[0].staged).toBe("line one\nline two\n")
    expect(seen[0].skills).toBeUndefined()
    expect(stagedPath).toMatch(/aml-include-[0-9a-f-]+\/include\/guide\.md$/)
    await expect(access(stagedPath)).rejects.toMatchObject({ code: "ENOENT" })
  })

  test("a staging failure names the staged path; the provider is not called", async () => {
    const agentProvider = new DeterministicAgentProvider()
    const rt = runtime({ agentProvider })
    const saved = process.env.TMPDIR
    const missing = join(dir.directory, "no-such-tmp")
    process.env.TMPDIR = missing
    try {
      const error = await rejection(
        rt.evaluate(<Workspace><Agent><Include path="docs/guide.md" maxBytes={4} /></Agent></Workspace>),
      )
      expect(error).toBeInstanceOf(EvaluationError)
      expect(error.message).toMatch(/^<Include> could not stage ".*\/no-such-tmp\/aml-include-[0-9a-f-]+\/include\/guide\.md"$/)
      expect(error.cause.code).toBe("ENOENT")
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
    expect(agentProvider.calls).toHaveLength(0)
  })

  test("inside a Sandbox the guest file itself is the reference, from the Sandbox cwd", async () => {
    const sandboxProvider = new DeterministicSandboxProvider({
      spawn: async () => ({
        id: "p",
        stdin: new WritableStream(),
        stdout: new ReadableStream({
          start: (c) => {
            c.enqueue(new TextEncoder().encode("0123456789"))
            c.close()
          },
        }),
        stderr: new ReadableStream({ start: (c) => c.close() }),
        kill: async () => {},
        wait: async () => ({ exitCode: 0 }),
      }),
    })
    const agentProvider = new DeterministicAgentProvider({ supportsSandbox: () => true })
    const rt = runtime({ agentProvider, sandboxProvider })
    const prompt = await rt.evaluate(
      <Workspace cwd="docs">
        <Sandbox>
          <Agent><Include path="data/big.txt" maxBytes={5} /></Agent>
        </Sandbox>
      </Workspace>,
    )
    expect(prompt).toBe(stagedInstruction("data/big.txt", 10, 1, 5, "../data/big.txt"))
  })
})

test("countLines counts a last line without a newline", () => {
  expect([countLines(""), countLines("a"), countLines("a\n"), countLines("a\nb"), countLines("\n\n")]).toEqual([0, 1, 1, 2, 2])
})

test("span: kind include, name Include, path or src; end attributes bytes, lines, inlined", async () => {
  const rt = runtime()
  const events = traced(rt, false)
  await rt.evaluate(<Workspace><Include path="docs/guide.md" /><Include src="policy.md" /></Workspace>)
  const starts = events.filter((e) => e.type === "span.start" && e.kind === "include")
  expect(starts.map((e) => [e.name, { ...e.attributes }])).toEqual([
    ["Include", { path: "docs/guide.md" }],
    ["Include", { src: "policy.md" }],
  ])
  const end = events.find((e) => e.type === "span.end" && e.spanId === starts[0].spanId)
  expect({ ...end.attributes }).toEqual({ bytes: 18, inlined: true, lines: 2 })
})
