// Packs what a release publishes for this machine's platform: the root package and the
// platform package npm/<triple> holding the release addon.
//
//   node scripts/pack-release.js [--destination DIR] [--prebuilt DIR]
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
// Prints one JSON line: { triple, root, platform } (absolute tarball paths).
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { destination: { type: "string" }, prebuilt: { type: "string" } } })
  const destination = resolve(values.destination ?? join(root, "target", "pack"))
  console.log(JSON.stringify(await packRelease({ destination, prebuilt: values.prebuilt })))
}
