// The consumer project of docs/INSTALL.md, built exactly as that page says (issue 25 §5, §6,
// issue 38 §3): from `npm init -y`, its commands run one by one as written, once per Node.js
// version (node-runtimes.ts: the host's Node 20 and the current LTS) with the tools npm picks
// on that version: the two release tarballs, the development tools, its tsconfig (over every
// example, the coding-agent snippets included), vitest config and spec, the ava configuration
// for the ava major installed and its test, the quick start, the first workflow and the
// `aml run` workflow. Every snippet comes from the page, so page and test cannot drift. No
// Rust tool on the PATH.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"

import { beforeAll, describe, expect, inject, test } from "vitest"

import { hostTriple } from "../../scripts/pack-release.js"
import { badEnginePackages, consumerEnv, dependencyClosure, npmCommand, projectBin, run, runOk } from "./consumer.js"
import { underQemuUser } from "../support/emulation.js"
import { NODE_LTS } from "./node-runtimes.js"
import { readmeBlock as docBlock, readmeBlocks as docBlocks } from "./package-files.js"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const readme = readFileSync(join(repo, "README.md"), "utf8")
const guide = readFileSync(join(repo, "docs", "INSTALL.md"), "utf8")
const version: string = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).version
const triple = hostTriple()
const { runtimes, tarballs, work } = inject("packageTest")

// What `npm install --save-dev <names>` picks (npm 11.19.1, checked with `--dry-run` on
// 2026-12-05), pinned so the test repeats; docs/INSTALL.md's table names each version. npm 11
// takes the newest version whose engines accept the running Node. On Node 22 and later: ava
// 8.1.2 is the newest, but its dependency cbor2@^2.4.0 is missing from the registry the tests
// use, so 8.0.1 (same configuration).
const TOOLS = { typescript: "7.0.2", tsx: "4.23.15", "@types/node": "26.6.11", vitest: "5.1.2", ava: "8.0.1" }
// On Node 20: vitest 5 and ava 8 dropped it, so npm picks the last majors that support it.
const NODE_20_TOOLS = { ...TOOLS, vitest: "4.1.12", ava: "7.0.0" }
// The tsconfig is also checked with the TypeScript lines still in wide use, installed beside
// the project (in the project, their `tsc` bins would replace TypeScript 7's).
const OLDER_TYPESCRIPT = { ts6: "6.0.3", ts5: "5.9.3" }
const ZOD = "4.6.7"
/** docs/INSTALL.md's ava configurations, in the page's order. */
const AVA_7 = 0
const AVA_8 = 1

describe("docs/INSTALL.md", () => {
  test("starts from `npm init -y`, sets the module type, installs both release tarballs in one command", () => {
    expect(docBlock(guide, "## Install", "sh")).toBe(`npm init -y\nnpm pkg set type=module\nnpm install ./aml-jsx-sdk-${version}.tgz ./aml-jsx-sdk-linux-x64-gnu-${version}.tgz\n`)
    expect(guide).toContain("**`@aml-jsx/sdk` is not published on npm yet**")
    expect(guide).toContain(`npm install --save-dev ${Object.keys(TOOLS).filter((name) => name !== "zod").join(" ")}\n`)
  })

  test("names the tools npm picks on each Node.js line and the versions tested", () => {
    const table = guide.slice(guide.indexOf("## Node.js versions and the tools npm picks"), guide.indexOf("## tsconfig"))
    expect(table).toContain(`| 20.19+ | ${NODE_20_TOOLS.vitest} | ${NODE_20_TOOLS.ava} |`)
    expect(table).toContain(`| 22.12+ (22, 24, 26) | ${TOOLS.vitest} | 8.1.2 |`)
    const versions = [...Object.values(TOOLS), NODE_20_TOOLS.vitest, NODE_20_TOOLS.ava, ...Object.values(OLDER_TYPESCRIPT), ZOD, NODE_LTS]
    for (const pinned of versions) expect(table).toContain(pinned)
  })

  test("the README's first workflow is the guide's quick start", () => {
    expect(docBlock(readme, "## A first workflow in your own project", "tsx")).toBe(docBlock(guide, "## Quick start", "tsx"))
  })
})

interface Variant {
  runtime: (typeof runtimes)[number]
  tools: typeof TOOLS
  /** which of docs/INSTALL.md's ava configurations: AVA_7 or AVA_8 */
  avaConfig: number
  /** the tools npm must warn about (EBADENGINE); none of ours ever */
  warns: string[]
}

const isNode20 = (runtime: Variant["runtime"]) => runtime.version.startsWith("20.")
// Under qemu-user (test group arm64) Node 20 keeps vitest 5 and ava 8, forced, as before: ava
// 7.0.0 found 0 tests there while ava 8 passed (not diagnosed yet), and the Node 20 tools npm
// picks are covered on x64. npm warns EBADENGINE for those two there, as docs/INSTALL.md says.
const variants: Variant[] = runtimes.map((runtime) => {
  if (!isNode20(runtime)) return { runtime, tools: TOOLS, avaConfig: AVA_8, warns: [] }
  if (underQemuUser) return { runtime, tools: TOOLS, avaConfig: AVA_8, warns: ["ava", "vitest"] }
  return { runtime, tools: NODE_20_TOOLS, avaConfig: AVA_7, warns: [] }
})

describe.each(variants)("the docs/INSTALL.md consumer project on Node.js $runtime.version, vitest $tools.vitest, ava $tools.ava", ({ runtime, tools: pinnedTools, avaConfig, warns }) => {
  const project = join(work, `consumer-node-${runtime.version}-ava-${pinnedTools.ava}`)
  const olderTypescript = `${project}-older-typescript`
  const env = consumerEnv(runtime.path)
  const bin = (name: string) => projectBin(project, name)
  let installLog = ""

  let initType: unknown

  beforeAll(async () => {
    mkdirSync(project)
    // The page's command names the tarballs in the current directory; the platform's own
    // tarball replaces the linux-x64-gnu one on other platforms (the release workflow).
    for (const tarball of [tarballs.root, tarballs.platform]) copyFileSync(tarball, join(project, basename(tarball)))
    // npm's warnings go to stderr: both logs are kept for the EBADENGINE check.
    const install = async (args: string[], cwd = project) => {
      const result = await run(cwd, env, npmCommand, [...args, "--no-audit", "--no-fund", "--prefer-offline"], 600_000)
      installLog += `${result.stdout}\n${result.stderr}\n`
      if (result.error) throw result.error
      if (result.status !== 0) throw new Error(`npm ${args.join(" ")} exited ${result.status}\n${installLog}`)
    }
    const manifest = () => JSON.parse(readFileSync(join(project, "package.json"), "utf8"))
    // "## Install", line by line as written: npm init -y, npm pkg set type=module, npm install.
    for (const line of docBlock(guide, "## Install", "sh").trim().split("\n")) {
      const [npm, ...args] = line.replace("linux-x64-gnu", triple).split(/\s+/)
      expect(npm).toBe("npm")
      await install(args)
      if (args.join(" ") === "init -y") initType = manifest().type
    }
    // "### ava": its configuration goes into the package.json that npm made.
    const ava = JSON.parse(docBlocks(guide, "### ava", "json")[avaConfig]!)
    writeFileSync(join(project, "package.json"), `${JSON.stringify({ ...manifest(), ...ava }, null, 2)}\n`)
    writeFileSync(join(project, "tsconfig.json"), docBlock(guide, "## tsconfig", "json"))
    writeFileSync(join(project, "quick-start.tsx"), docBlock(guide, "## Quick start", "tsx"))
    writeFileSync(join(project, "first-workflow.tsx"), docBlock(guide, "## A first workflow: an Agent with a Tool", "tsx"))
    writeFileSync(join(project, "vitest.config.ts"), docBlock(guide, "### vitest", "ts"))
    writeFileSync(join(project, "review.spec.tsx"), docBlock(guide, "### vitest", "tsx"))
    writeFileSync(join(project, "review.test.tsx"), docBlock(guide, "### ava", "tsx"))
    writeFileSync(join(project, "workflow.tsx"), docBlock(guide, "## Running workflows with `aml run`", "tsx"))
    // Type-checked only: they launch installed coding agents (and read their keys from `process.env`).
    docBlocks(guide, "## Built-in coding agents", "tsx").forEach((block, index) => writeFileSync(join(project, `agent-${index}.tsx`), block))
    const tools = Object.entries(pinnedTools).map(([name, pinned]) => `${name}@${pinned}`)
    await install(["install", "--save-dev", ...tools, `zod@${ZOD}`])
    mkdirSync(olderTypescript)
    writeFileSync(join(olderTypescript, "package.json"), `${JSON.stringify({ name: "older-typescript", private: true })}\n`)
    await install(["install", ...Object.entries(OLDER_TYPESCRIPT).map(([alias, pinned]) => `${alias}@npm:typescript@${pinned}`)], olderTypescript)
  }, 1_200_000)

  test("runs on that Node.js, with no Rust toolchain on the PATH", async () => {
    expect(await runOk(project, env, "node", ["--version"])).toBe(`v${runtime.version}\n`)
    expect(await runOk(project, env, "node", ["-e", "console.log(process.env.PATH.split(require('path').delimiter).some((d) => require('fs').existsSync(d + '/cargo')))"])).toBe("false\n")
  })

  test(`npm warns about no package of ours, and about ${warns.join(" and ") || "nothing else"}`, () => {
    const ours = [...dependencyClosure(project, "@aml-jsx/sdk"), ...dependencyClosure(project, `@aml-jsx/sdk-${triple}`)]
    expect(ours).toEqual(expect.arrayContaining(["@aml-jsx/sdk", "oxc-transform"]))
    const warned = badEnginePackages(installLog)
    expect(warned.filter((name) => ours.includes(name))).toEqual([])
    // With the tools npm picks for the running Node there are none; forced newer tools on
    // Node 20 (qemu, above) warn.
    if (warns.length > 0) expect(warned).toEqual(expect.arrayContaining(warns))
    else expect(warned).toEqual([])
  })

  test("the quick start runs through tsx", async () => {
    expect(await runOk(project, env, bin("tsx"), ["quick-start.tsx"])).toBe("HELLO, AML!\n")
  })

  // Why the page says `npm pkg set type=module`: what `npm init -y` leaves stops the quick start.
  test("`npm init -y` alone writes commonjs, under which the quick start stops at its top-level await", async () => {
    expect(initType).toBe("commonjs")
    const commonjs = join(project, "commonjs")
    mkdirSync(commonjs)
    try {
      writeFileSync(join(commonjs, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`)
      copyFileSync(join(project, "quick-start.tsx"), join(commonjs, "quick-start.tsx"))
      const result = await run(commonjs, env, bin("tsx"), ["quick-start.tsx"])
      expect(result.status).not.toBe(0)
      expect(result.stderr).toContain('Top-level await is currently not supported with the "cjs" output format')
    } finally {
      rmSync(commonjs, { force: true, recursive: true })
    }
  })

  test("the first workflow runs an Agent that calls a Tool", async () => {
    expect(await runOk(project, env, bin("tsx"), ["first-workflow.tsx"])).toBe('Summarize order A-42. -> {"id":"A-42","status":"paid"}\n')
  })

  // docs/INSTALL.md and docs/CLI.md: the reference guide's `npx aml run`, with no @aml-jsx/cli installed.
  test("the package's `aml` command runs the page's exported TSX workflow, also through npx", async () => {
    expect(await runOk(project, env, bin("aml"), ["run", "workflow.tsx"])).toBe("HELLO, AML!\n")
    const npx = process.platform === "win32" ? "npx.cmd" : "npx"
    expect(await runOk(project, env, npx, ["--no-install", "aml", "run", "workflow.tsx"])).toBe("HELLO, AML!\n")
  })

  // The repository's own examples from the installed package: the review (Agents, Tools,
  // Parallel) and a Workspace round trip (a Script in a local Sandbox, saved by the first run
  // and restored by the second). Under qemu (test group arm64) this is the arm64 acceptance.
  test("runs examples/review.tsx and a Workspace round trip (examples/workspace-persistence.tsx twice)", async () => {
    const examples = join(project, "examples")
    mkdirSync(examples, { recursive: true })
    for (const file of ["review.tsx", "workspace-persistence.tsx"]) copyFileSync(join(repo, "examples", file), join(examples, file))
    cpSync(join(repo, "examples", "review-sample"), join(examples, "review-sample"), { recursive: true })
    const review = await runOk(project, env, bin("aml"), ["run", "examples/review.tsx"])
    expect(review).toContain("- src/math.js:3 divide() returns Infinity or NaN when b is 0")
    expect(review.trimEnd().endsWith("Verdict: request changes (3 findings)")).toBe(true)
    const store = mkdtempSync(join(work, "workspace-store-"))
    const storeEnv = { ...env, AML_WORKSPACE_STORE: store }
    const first = await runOk(project, storeEnv, bin("aml"), ["run", "examples/workspace-persistence.tsx"])
    expect(first).toContain("run 1 (runs restored from the last revision: 0)")
    const second = await runOk(project, storeEnv, bin("aml"), ["run", "examples/workspace-persistence.tsx"])
    expect(second).toContain("run 2 (runs restored from the last revision: 1)")
    expect(second).toContain("run 1\nrun 2\n")
  })

  test("the tsconfig passes `tsc --noEmit` over the whole project with TypeScript 7, 6 and 5", async () => {
    expect(await runOk(project, env, bin("tsc"), ["--version"])).toBe(`Version ${pinnedTools.typescript}\n`)
    expect(await runOk(project, env, bin("tsc"), ["--noEmit"])).toBe("")
    for (const [alias, pinned] of Object.entries(OLDER_TYPESCRIPT)) {
      const tsc = join(olderTypescript, "node_modules", alias, "bin", "tsc")
      expect(await runOk(project, env, "node", [tsc, "--version"])).toBe(`Version ${pinned}\n`)
      expect(await runOk(project, env, "node", [tsc, "--noEmit", "-p", "tsconfig.json"])).toBe("")
    }
  })

  test("vitest runs its spec and leaves ava's test file alone", async () => {
    await runOk(project, env, bin("vitest"), ["run", "--reporter=json", "--outputFile=vitest-report.json"])
    const report = JSON.parse(readFileSync(join(project, "vitest-report.json"), "utf8"))
    expect(report.testResults.map((file: { name: string }) => basename(file.name))).toEqual(["review.spec.tsx"])
    expect([report.numPassedTests, report.numFailedTests, report.numTotalTests]).toEqual([2, 0, 2])
  })

  test("ava runs its TSX test and leaves vitest's spec alone", async () => {
    // ava ends a run after 10 s without a test event; under qemu-user loading tsx and the SDK in
    // its worker can take longer, which ends the run with `1..0`. The user's configuration
    // is unchanged; only the inactivity bound is raised there.
    const tap = await runOk(project, env, bin("ava"), underQemuUser ? ["--tap", "--timeout=10m"] : ["--tap"])
    expect(tap).toMatch(/^# tests 2$/m)
    expect(tap).toMatch(/^# pass 2$/m)
    expect(tap).toMatch(/^# fail 0$/m)
    expect(tap).not.toContain("review.spec")
  })

  // docs/INSTALL.md "### ava": ava 8's form under ava 7 fails with a misleading message.
  if (avaConfig === AVA_7) {
    test("under ava 7, ava 8's configuration fails with ERR_PACKAGE_PATH_NOT_EXPORTED for ./jsx-runtime", async () => {
      const path = join(project, "package.json")
      const saved = readFileSync(path, "utf8")
      const ava8 = JSON.parse(docBlocks(guide, "### ava", "json")[AVA_8]!)
      try {
        writeFileSync(path, `${JSON.stringify({ ...JSON.parse(saved), ...ava8 }, null, 2)}\n`)
        const result = await run(project, env, bin("ava"), ["--tap"])
        expect(result.status).not.toBe(0)
        const output = `${result.stdout}\n${result.stderr}`
        expect(output).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED")
        expect(output).toContain("./jsx-runtime")
      } finally {
        writeFileSync(path, saved)
      }
    })
  }

  // A failing assertion must reach the user (vitest 5 forced onto Node 20, as under qemu here,
  // cannot: its reporter needs Map.groupBy). Last, because the failing spec must not meet the
  // runs above.
  test("vitest reports a failing spec, except vitest 5 forced onto Node 20, whose reporter needs Map.groupBy", async () => {
    const failing = join(project, "failing.spec.tsx")
    writeFileSync(failing, 'import { expect, test } from "vitest"\ntest("fails", () => expect(1).toBe(2))\n')
    try {
      const result = await run(project, env, bin("vitest"), ["run", "failing.spec.tsx"])
      expect(result.status).toBe(1)
      // Without colours: vitest may keep them when the parent process forced them.
      const output = `${result.stdout}\n${result.stderr}`.replace(/\u001b\[[0-9;]*m/g, "")
      if (warns.includes("vitest")) {
        expect(output).toContain("TypeError: Map.groupBy is not a function or its return value is not iterable")
        expect(output).not.toContain("expected 1 to be 2")
      } else expect(output).toContain("AssertionError: expected 1 to be 2")
    } finally {
      rmSync(failing)
    }
  })
})
