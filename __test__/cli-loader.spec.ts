// The in-process loader of `aml run` (lib/cli/inline-loader.js): it must load a workflow
// exactly as Node's resolver with the module hooks would, and hand over to the hooks
// whenever it cannot. Bare specifiers are checked against Node's own resolver; workflows are
// run both ways (AML_RUN_LOADER=hooks forces the hooks) and must agree.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

import { afterAll, describe, expect, it } from "vitest"

import { resolveBare, UnsupportedResolution } from "../lib/cli/package-resolve.js"
import { currentBundle } from "../lib/cli/sdk-bundle.js"
import { fixture, removeTempProjects, repoRoot, runCli, tempProject } from "./support/cli.js"

afterAll(removeTempProjects)

const scratch = mkdtempSync(join(tmpdir(), "aml-cli-loader-"))
afterAll(() => rmSync(scratch, { force: true, recursive: true }))
const cacheHome = join(scratch, "cache")
const cacheEnv = { XDG_CACHE_HOME: cacheHome }
const compiledFiles = () => readdirSync(join(cacheHome, "aml-jsx-sdk", "run")).filter((name) => name.endsWith(".mjs"))

describe("bare specifiers resolve as Node resolves them", () => {
  const specifiers = [
    "@aml-jsx/sdk", // self-reference (this repository is the package)
    "@aml-jsx/sdk/testing",
    "@aml-jsx/sdk/jsx-runtime",
    "zod",
    "zod/v4",
    "vitest",
    "es-module-lexer",
    "oxc-transform",
    "@opentelemetry/api",
    "node:fs",
    "path",
  ]

  it.each(specifiers)("%s", (specifier) => {
    // Node's answer for a module in the repository root.
    const expected = execFileSync(process.execPath, ["--input-type=module", "-e", `process.stdout.write(import.meta.resolve(${JSON.stringify(specifier)}))`], {
      cwd: repoRoot,
      encoding: "utf8",
    })
    expect(resolveBare(specifier, join(repoRoot, "workflow.tsx"))).toBe(expected)
  })

  it("leaves what it does not handle to Node: #imports, unknown packages, unexported subpaths", () => {
    for (const specifier of ["#internal", "no-such-package-aml", "zod/not-exported", "@aml-jsx/sdk/lib/core/runtime.js"]) {
      expect(() => resolveBare(specifier, join(repoRoot, "workflow.tsx"))).toThrow(UnsupportedResolution)
    }
  })
})

describe("workflows load the same in process and through the hooks", () => {
  const cases = [
    ["relative-imports.tsx", "answer=42 [ok]!\n"],
    ["module-meta.tsx", `url=${pathToFileURL(fixture("module-meta.tsx")).href}\nfilename=module-meta.tsx\ndirname=cli\nresolve=math.ts\ndynamic=answer=8\n`],
    ["imports-plain-js.tsx", "plain js: 10\n"],
  ] as const

  it.each(cases)("%s", async (name, expected) => {
    const inline = await runCli(["run", fixture(name)], { env: cacheEnv })
    const hooks = await runCli(["run", fixture(name)], { env: { ...cacheEnv, AML_RUN_LOADER: "hooks" } })
    expect(inline.stdout, inline.stderr).toBe(expected)
    expect(hooks.stdout, hooks.stderr).toBe(expected)
  })

  it("compiles into the cache directory, linking the SDK the CLI runs (its bundle when current)", async () => {
    const result = await runCli(["run", "examples/basic.tsx"], { env: cacheEnv })
    expect(result.code, result.stderr).toBe(0)
    const compiled = compiledFiles().map((name) => readFileSync(join(cacheHome, "aml-jsx-sdk", "run", name), "utf8"))
    const basic = compiled.find((code) => code.includes("components are functions"))!
    const sdk = currentBundle() === undefined ? "index.js" : "dist/index.js"
    expect(basic).toContain(`import { evaluate } from "${pathToFileURL(join(repoRoot, sdk)).href}";`)
    expect(basic).toMatch(/\/\/# sourceMappingURL=data:application\/json;base64,/)
  })

  it("recompiles a file whose source changed", async () => {
    const dir = tempProject({ "main.tsx": 'import { word } from "./word"\nexport default <>{word}</>\n', "word.ts": 'export const word = "first"\n' })
    expect((await runCli(["run", join(dir, "main.tsx")], { env: cacheEnv })).stdout).toBe("first\n")
    writeFileSync(join(dir, "word.ts"), 'export const word = "second"\n')
    expect((await runCli(["run", join(dir, "main.tsx")], { env: cacheEnv })).stdout).toBe("second\n")
    rmSync(dir, { force: true, recursive: true })
  })

  it("falls back to the hooks when the cache directory cannot be created", async () => {
    // A regular file where the cache directory's parent should be: mkdir fails (ENOTDIR).
    const file = join(scratch, "not-a-directory")
    writeFileSync(file, "")
    const result = await runCli(["run", fixture("relative-imports.tsx")], { env: { XDG_CACHE_HOME: file } })
    expect(result).toMatchObject({ code: 0, stdout: "answer=42 [ok]!\n" })
  })
})

describe("the SDK bundle is used only while it matches its sources", () => {
  function fakePackage() {
    const root = mkdtempSync(join(scratch, "pkg-"))
    mkdirSync(join(root, "dist"))
    mkdirSync(join(root, "lib"))
    writeFileSync(join(root, "lib", "a.js"), "export const a = 1\n")
    return root
  }
  function writeManifest(root: string, sha1: string) {
    const { mtimeMs, size } = statSync(join(root, "lib", "a.js"))
    writeFileSync(join(root, "dist", "manifest.json"), JSON.stringify({ entries: { index: "index.js" }, files: [{ mtimeMs, path: "lib/a.js", sha1, size }] }))
  }
  const sha1 = createHash("sha1").update("export const a = 1\n").digest("hex")

  it("current: the bundled entries replace the source entries", () => {
    const root = fakePackage()
    writeManifest(root, sha1)
    const bundle = currentBundle(root)!
    expect(bundle.index).toBe(pathToFileURL(join(root, "dist", "index.js")).href)
    expect(bundle.map.get(pathToFileURL(join(root, "index.js")).href)).toBe(bundle.index)
  })

  it("a touched file with the same content is still current (npm's fixed mtimes)", () => {
    const root = fakePackage()
    writeManifest(root, sha1)
    utimesSync(join(root, "lib", "a.js"), new Date(499162500000), new Date(499162500000))
    expect(currentBundle(root)).toBeDefined()
  })

  it("an edited source (same size) or no manifest means the modules", () => {
    const root = fakePackage()
    writeManifest(root, sha1)
    writeFileSync(join(root, "lib", "a.js"), "export const a = 2\n")
    expect(currentBundle(root)).toBeUndefined()
    rmSync(join(root, "dist", "manifest.json"))
    expect(currentBundle(root)).toBeUndefined()
  })
})
