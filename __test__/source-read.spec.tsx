// The trusted application reads of `<Skill src>`, `<File src>` and `<Include src>` are done in
// Rust (crates/aml-files/src/source_read.rs). Their failures must still carry the error Node's
// own `fs` would have given (the cause users inspect): same message, code, errno, syscall and
// path, checked here against `node:fs` itself on the same paths.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, File, Include, Skill, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

import { expectEvaluationError } from "./support/errors.js"
import { directoryWorkspace, scratch } from "./support/workspace.js"

let app: { directory: string; cleanup: () => Promise<void> }
let work: { directory: string; cleanup: () => Promise<void> }
beforeEach(async () => {
  app = await scratch()
  work = await scratch()
})
afterEach(async () => {
  await app.cleanup()
  await work.cleanup()
})

const nodeFailure = (promise: Promise<unknown>) => promise.then(() => undefined, (error) => error)

/** What users can read off an fs error. */
const shape = (error: any) => ({
  code: error.code,
  errno: error.errno,
  message: error.message,
  path: error.path,
  syscall: error.syscall,
})

function runtime() {
  return new AmlRuntime({
    agentProvider: new DeterministicAgentProvider({ respond: () => ({ text: "ok" }) }),
    cwd: app.directory,
    workspaceProvider: directoryWorkspace(work.directory).provider,
  })
}

describe("<Skill src> read natively", () => {
  test("a missing file fails with Node's stat error as the cause", async () => {
    const absolute = join(app.directory, "missing.md")
    const error = await expectEvaluationError(
      runtime().evaluate(<Agent><Skill src="missing.md" /></Agent>),
      `<Skill> could not read local file "${absolute}"`,
    )
    expect(shape(error.cause)).toEqual(shape(await nodeFailure(stat(absolute))))
  })

  test("a file's text reaches the prompt unchanged, multi-byte characters and all", async () => {
    const text = "règle: ✓ 𝄞 — keep"
    await writeFile(join(app.directory, "rule.md"), text)
    const prompts: string[] = []
    const rt = new AmlRuntime({
      agentProvider: new DeterministicAgentProvider({ respond: (request: any) => (prompts.push(request.prompt), { text: "ok" }) }),
      cwd: app.directory,
    })
    await rt.evaluate(<Agent>do<Skill src="rule.md" /></Agent>)
    expect(prompts).toEqual([`do${text}`])
  })
})

describe("<File src> and <Include src> read natively", () => {
  test("a directory fails with Node's read error (EISDIR, no path) as the cause", async () => {
    const absolute = join(app.directory, "folder")
    await mkdir(absolute)
    const expected = shape(await nodeFailure(readFile(absolute)))
    expect(expected.code).toBe("EISDIR")
    const file = await expectEvaluationError(
      runtime().evaluate(<Workspace><File path="x.md" src="folder" /></Workspace>),
      `<File> could not read local file "${absolute}"`,
    )
    expect(shape(file.cause)).toEqual(expected)
    const include = await expectEvaluationError(
      runtime().evaluate(<Include src="folder" />),
      `<Include> could not read local file "${absolute}"`,
    )
    expect(shape(include.cause)).toEqual(expected)
  })

  test("a missing file fails with Node's open error as the cause", async () => {
    const absolute = join(app.directory, "nope.md")
    const error = await expectEvaluationError(
      runtime().evaluate(<Workspace><File path="x.md" src="nope.md" /></Workspace>),
      `<File> could not read local file "${absolute}"`,
    )
    expect(error).toBeInstanceOf(EvaluationError)
    expect(shape(error.cause)).toEqual(shape(await nodeFailure(readFile(absolute))))
  })

  test("the bytes are copied exactly", async () => {
    const bytes = Buffer.from("é\u0000ü ✓\n", "utf8")
    await writeFile(join(app.directory, "template.md"), bytes)
    await runtime().evaluate(<Workspace><File path="copy.md" src="template.md" /></Workspace>)
    expect(Buffer.compare(await readFile(join(work.directory, "copy.md")), bytes)).toBe(0)
  })
})
