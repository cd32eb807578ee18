// Every code block the docs mark `<!-- runnable: prints "<output>" -->` runs as written (issue 38
// §3): copied byte for byte into a fresh project that has only what docs/INSTALL.md sets up
// (`"type": "module"`, its tsconfig, the package), run through tsx twice, and its stdout must be
// the promised line both times. A snippet that needs a step the page does not show fails here.
// The package test runs INSTALL.md's blocks once more from the packed tarballs.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

import { afterAll, describe, expect, test } from "vitest"

import { readmeBlock as docBlock } from "./package/package-files.js"

const run = promisify(execFile)
const root = fileURLToPath(new URL("..", import.meta.url))
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs")

interface Snippet {
  page: string
  line: number
  prints: string
  language: string
  source: string
}

const MARKER = /^<!-- runnable: prints ("(?:[^"\\]|\\.)*") -->\n```(tsx|ts)\n([\s\S]*?)\n```$/gm

function snippets(page: string): Snippet[] {
  const text = readFileSync(join(root, page), "utf8")
  return [...text.matchAll(MARKER)].map((match) => ({
    line: text.slice(0, match.index).split("\n").length,
    page,
    prints: JSON.parse(match[1]!),
    language: match[2]!,
    source: `${match[3]}\n`,
  }))
}

const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)]
const found = pages.flatMap(snippets)
const install = readFileSync(join(root, "docs", "INSTALL.md"), "utf8")

// Under target/, so bare imports the docs install next to the package (zod) resolve from the
// repository's node_modules; the package itself is linked in as a user's install would put it.
const scratch = join(root, "target", "tmp")
mkdirSync(scratch, { recursive: true })
const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { force: true, recursive: true })
})

function project(): string {
  const dir = mkdtempSync(join(scratch, "doc-snippet-"))
  made.push(dir)
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "doc-snippet", private: true, type: "module" })}\n`)
  writeFileSync(join(dir, "tsconfig.json"), docBlock(install, "## tsconfig", "json"))
  mkdirSync(join(dir, "node_modules", "@aml-jsx"), { recursive: true })
  symlinkSync(root, join(dir, "node_modules", "@aml-jsx", "sdk"), "dir")
  return dir
}

test("the docs mark their runnable snippets (the README's first workflow, INSTALL.md's quick start and first workflow, WORKSPACE.md's program)", () => {
  const count = (page: string) => found.filter((snippet) => snippet.page === page).length
  expect([count("README.md"), count("docs/INSTALL.md"), count("docs/WORKSPACE.md")]).toEqual([1, 2, 1])
})

describe.each(found)("$page:$line", (snippet) => {
  test(`runs as written, twice, and prints ${JSON.stringify(snippet.prints)}`, async () => {
    const dir = project()
    const file = join(dir, `snippet.${snippet.language}`)
    writeFileSync(file, snippet.source)
    for (const _ of [1, 2]) {
      const { stdout } = await run(process.execPath, [tsx, file], { cwd: dir, timeout: 120_000 })
      expect(stdout).toBe(`${snippet.prints}\n`)
    }
  }, 240_000)
})
