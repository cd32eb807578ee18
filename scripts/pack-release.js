// Packs what a release publishes for this machine's platform: the root package and the
// platform package npm/<triple> holding the release addon.
//
//   node scripts/pack-release.js [--destination DIR] [--prebuilt DIR]
//   node scripts/pack-release.js --all [--destination DIR]
//
// --all cross-builds every Unix target of `napi.targets` from a Linux x64 machine (the
// toolchains come from scripts/install-toolchains.sh; docs/PACKAGING.md "Every Unix target")
// and packs the root once plus one tarball per platform: seven tarballs.
//
// 1. Builds the release addon without the `test-hooks` cargo feature into
//    target/napi-release/ (or takes `<DIR>/<binary>.<triple>.node` with --prebuilt, as the
//    release workflow does with the artifact of its build job).
// 2. Checks that the loader that build generates is byte-identical to native/binding.js:
//    the test hooks are kept out of the loader, so one loader serves both builds.
// 3. Stages npm/<triple>/ with the addon and LICENSE, as `napi artifacts` does.
// 4. `npm pack` of the root (prepack writes the publish manifest, scripts/publish-manifest.js)
//    and of npm/<triple>, then removes the staged files again.
//
// Prints one JSON line: { triple, root, platform } (absolute tarball paths); with --all,
// { root, platforms: { <triple>: tarball } }.
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

import { buildAddon } from "./build-addon.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** napi's platform-arch-abi name of this machine (`linux-x64-gnu`, `darwin-arm64`, …). */
export function hostTriple() {
  const { platform, arch } = process
  if (platform === "linux") {
    const glibc = process.report?.getReport()?.header?.glibcVersionRuntime
    return `linux-${arch}-${glibc ? "gnu" : "musl"}`
  }
  if (platform === "win32") return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

// Asynchronous on purpose: the package test calls this from a vitest worker, whose RPC to the
// runner times out if its event loop is blocked for the minutes a release build takes.
function run(command, args, { capture = true, ...options } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", capture ? "pipe" : process.stderr, "inherit"], ...options })
    let stdout = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
    child.on("error", reject)
    child.on("close", (code, signal) => {
      if (code === 0) resolveRun(stdout)
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code ?? signal}\n${stdout}`))
    })
  })
}

/** `npm pack` of `dir` into `destination`; returns the tarball's absolute path. */
async function npmPack(dir, destination) {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const output = await run(npm, ["pack", dir, "--json", "--pack-destination", destination], { shell: process.platform === "win32" })
  const [entry] = JSON.parse(output)
  return join(destination, entry.filename)
}

export async function packRelease({ destination, prebuilt }) {
  const triple = hostTriple()
  const packageDir = join(root, "npm", triple)
  if (!existsSync(join(packageDir, "package.json"))) throw new Error(`no platform package npm/${triple}: add its target to napi.targets`)
  const platformManifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"))
  const buildDir = prebuilt ? resolve(prebuilt) : join(root, "target", "napi-release")
  if (!prebuilt) {
    // Our stdout carries the JSON line; the build's output all goes to stderr.
    await buildAddon(["--platform", "--release", "--no-default-features", "--esm", "--output-dir", buildDir, "--js", "binding.js", "--dts", "binding.d.ts"])
    const loader = readFileSync(join(buildDir, "binding.js"), "utf8")
    if (!existsSync(join(root, "native", "binding.js")) || readFileSync(join(root, "native", "binding.js"), "utf8") !== loader) {
      throw new Error("native/binding.js differs from the loader of the release build: run `npm run build`")
    }
  }
  // A prebuilt directory may bring the loader too (the release workflow's build artifact).
  if (prebuilt && existsSync(join(buildDir, "binding.js"))) copyFileSync(join(buildDir, "binding.js"), join(root, "native", "binding.js"))
  const addon = join(buildDir, platformManifest.main)
  if (!existsSync(addon)) throw new Error(`${addon} is missing`)
  mkdirSync(destination, { recursive: true })
  const staged = [join(packageDir, platformManifest.main), join(packageDir, "LICENSE")]
  try {
    copyFileSync(addon, staged[0])
    copyFileSync(join(root, "LICENSE"), staged[1])
    const platform = await npmPack(packageDir, destination)
    const rootTarball = await npmPack(root, destination)
    return { triple, root: rootTarball, platform }
  } finally {
    for (const file of staged) rmSync(file, { force: true })
  }
}

const macFrameworks = join(root, "scripts", "macos-frameworks")

/**
 * How each Unix platform package is built from Linux x64. zig (through cargo-zigbuild, napi's
 * `-x`) links musl and Darwin; Debian's gcc links arm64 glibc, so the addon needs the same
 * glibc symbols as one built natively on Debian 12 arm64. Darwin links CoreFoundation and
 * Security through the stubs in scripts/macos-frameworks (docs/DEPENDENCIES.md), states its
 * minimum macOS: Node 20's own (11.0 on arm64, 10.15 on x64), and names itself by an
 * @rpath-relative install name; napi-build links it with `-undefined dynamic_lookup`, so the
 * napi_* symbols are left to Node (scripts/check-artifacts.js checks all three).
 */
const darwinFlags = (triple) =>
  [
    `-C link-arg=-F${macFrameworks}`,
    // The install name (LC_ID_DYLIB) is the file's own name under @rpath rather than the
    // linker's default, the build machine's absolute path to target/…/libaml_jsx_sdk.dylib.
    `-C link-arg=-Wl,-install_name,@rpath/aml-jsx-sdk.${triple}.node`,
  ].join(" ")

export const UNIX_TARGETS = {
  "linux-x64-gnu": { rust: "x86_64-unknown-linux-gnu", args: [], env: {} },
  // A musl cdylib needs the C runtime linked dynamically (musl targets default to static).
  "linux-x64-musl": { rust: "x86_64-unknown-linux-musl", args: ["-x"], env: { CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS: "-C target-feature=-crt-static" } },
  "linux-arm64-gnu": {
    rust: "aarch64-unknown-linux-gnu",
    args: [],
    env: {
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER: "aarch64-linux-gnu-gcc",
      CC_aarch64_unknown_linux_gnu: "aarch64-linux-gnu-gcc",
      AR_aarch64_unknown_linux_gnu: "aarch64-linux-gnu-ar",
    },
  },
  "linux-arm64-musl": { rust: "aarch64-unknown-linux-musl", args: ["-x"], env: { CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS: "-C target-feature=-crt-static" } },
  "darwin-x64": {
    rust: "x86_64-apple-darwin",
    args: ["-x"],
    env: { MACOSX_DEPLOYMENT_TARGET: "10.15", CARGO_TARGET_X86_64_APPLE_DARWIN_RUSTFLAGS: darwinFlags("darwin-x64") },
  },
  "darwin-arm64": {
    rust: "aarch64-apple-darwin",
    args: ["-x"],
    env: { MACOSX_DEPLOYMENT_TARGET: "11.0", CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS: darwinFlags("darwin-arm64") },
  },
}

/**
 * Builds one platform's release addon (without test hooks) into target/napi-release/<triple>/
 * and returns that directory. The host's own target builds without `--target`, so it shares
 * target/release with `npm run pack:release` and the package test.
 */
export async function buildPlatform(triple) {
  const spec = UNIX_TARGETS[triple]
  if (!spec) throw new Error(`no Unix target ${triple}`)
  const outputDir = join(root, "target", "napi-release", triple)
  const target = triple === hostTriple() ? [] : ["--target", spec.rust]
  const saved = {}
  for (const [name, value] of Object.entries(spec.env)) {
    saved[name] = process.env[name]
    process.env[name] = value
  }
  try {
    await buildAddon(["--platform", "--release", "--no-default-features", "--esm", ...target, ...spec.args, "--output-dir", outputDir, "--js", "binding.js", "--dts", "binding.d.ts"])
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
  return outputDir
}

/** Builds and packs every Unix target (or those in `only`): the platform tarballs, then the
 * root tarball naming all six. */
export async function packAll({ destination, only }) {
  const triples = only ?? Object.keys(UNIX_TARGETS)
  mkdirSync(destination, { recursive: true })
  const platforms = {}
  let rootTarball
  for (const triple of triples) {
    const buildDir = await buildPlatform(triple)
    // napi generates one loader for all targets: a clone without `npm run build` takes the
    // first build's, and every later one must match it byte for byte.
    const loader = readFileSync(join(buildDir, "binding.js"), "utf8")
    const committed = join(root, "native", "binding.js")
    if (!existsSync(committed)) {
      mkdirSync(dirname(committed), { recursive: true })
      copyFileSync(join(buildDir, "binding.js"), committed)
    } else if (readFileSync(committed, "utf8") !== loader) {
      throw new Error(`native/binding.js differs from the loader of the ${triple} release build: run \`npm run build\``)
    }
    platforms[triple] = await packPlatform(triple, buildDir, destination)
  }
  // dist/ (the CLI's SDK bundle) is made by `npm run build`; a clone that skipped it makes it here.
  if (!existsSync(join(root, "dist", "manifest.json"))) await run(process.execPath, [join(root, "scripts", "bundle-sdk.js")], { capture: false })
  // The root last, with every platform package staged, so its optionalDependencies name all.
  const staged = []
  try {
    // Every Unix platform, also those built by an earlier `--only` run: a root package must
    // name all six, so a missing build fails here.
    for (const triple of Object.keys(UNIX_TARGETS)) staged.push(...stage(triple, join(root, "target", "napi-release", triple)))
    rootTarball = await npmPack(root, destination)
  } finally {
    for (const file of staged) rmSync(file, { force: true })
  }
  return { root: rootTarball, platforms }
}

/** Copies the addon and LICENSE into npm/<triple>/; returns the staged files. */
function stage(triple, buildDir) {
  const packageDir = join(root, "npm", triple)
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"))
  const addon = join(buildDir, manifest.main)
  if (!existsSync(addon)) throw new Error(`${addon} is missing`)
  const staged = [join(packageDir, manifest.main), join(packageDir, "LICENSE")]
  copyFileSync(addon, staged[0])
  copyFileSync(join(root, "LICENSE"), staged[1])
  return staged
}

async function packPlatform(triple, buildDir, destination) {
  const staged = stage(triple, buildDir)
  try {
    return await npmPack(join(root, "npm", triple), destination)
  } finally {
    for (const file of staged) rmSync(file, { force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { destination: { type: "string" }, prebuilt: { type: "string" }, all: { type: "boolean" }, only: { type: "string" } },
  })
  const destination = resolve(values.destination ?? join(root, "target", "pack"))
  if (values.all) {
    const only = values.only?.split(",").map((triple) => triple.trim())
    console.log(JSON.stringify(await packAll({ destination, only })))
  } else console.log(JSON.stringify(await packRelease({ destination, prebuilt: values.prebuilt })))
}
