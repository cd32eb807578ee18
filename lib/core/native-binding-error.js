// The error a consumer sees when no native addon loads. napi's generated loader throws
// "Cannot find native binding. npm has a bug related to optional dependencies …" with its
// attempts chained as `cause`, the last one first — on Linux x64 that is the WASI package,
// which this project does not publish, so the message points at neither the platform nor the
// fix. This error names both and keeps napi's error as its `cause`. It imports nothing from
// the addon: it exists exactly when the addon is missing.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const SOURCE_BUILD = "https://github.com/aml-jsx/sdk-rs#build-the-addon-from-source"

/** napi's platform name of this machine: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, … */
export function napiPlatform(platform = process.platform, arch = process.arch, libc = linuxLibc()) {
  if (platform === "linux") return `${platform}-${arch}-${libc === "musl" ? "musl" : "gnu"}`
  if (platform === "win32") return `${platform}-${arch}-msvc`
  return `${platform}-${arch}`
}

/**
 * "glibc" or "musl" on Linux (the libc Node itself runs on), else undefined. As napi's loader
 * decides: /usr/bin/ldd first, then the diagnostic report's header (without its network part,
 * which may wait on DNS).
 */
function linuxLibc() {
  if (process.platform !== "linux") return undefined
  try {
    return readFileSync("/usr/bin/ldd", "utf8").includes("musl") ? "musl" : "glibc"
  } catch {
    const excludeNetwork = process.report.excludeNetwork
    process.report.excludeNetwork = true
    try {
      return process.report.getReport().header?.glibcVersionRuntime ? "glibc" : "musl"
    } finally {
      process.report.excludeNetwork = excludeNetwork
    }
  }
}

// By the package's own name (self-reference through "exports"), so the path is right from
// lib/core/ and from the bundled copy in dist/ alike.
function ownManifest() {
  try {
    return JSON.parse(readFileSync(require.resolve("@aml-jsx/sdk/package.json"), "utf8"))
  } catch {
    return {}
  }
}

/** Whether `name` resolves from this package (installed, but its addon failed to load). */
function installed(name) {
  try {
    require.resolve(`${name}/package.json`)
    return true
  } catch {
    return false
  }
}

/** Why nothing loaded and what to do, for the platform package `name` of this release. */
function remedy(name, manifest, isInstalled) {
  const version = manifest.version ?? "<version>"
  const fromSource = `build the addon from source: ${SOURCE_BUILD}`
  // A published root lists exactly the platform packages its release has; a checkout lists none.
  if (manifest.optionalDependencies && !(name in manifest.optionalDependencies)) {
    return `this release has no platform package for it (${name}). Or ${fromSource}`
  }
  if (isInstalled(name)) {
    return `${name} is installed but its addon did not load (see the cause chain). Reinstall it at version ${version}, or ${fromSource}`
  }
  const tarball = `./${name.replace("@aml-jsx/", "aml-jsx-")}-${version}.tgz`
  return (
    `the platform package ${name} is not installed. Install it next to @aml-jsx/sdk at the same version, ${version}` +
    ` — with the release tarballs, in one command: npm install ./aml-jsx-sdk-${version}.tgz ${tarball}` +
    ` (from the registry, once published: npm install ${name}@${version}) — or ${fromSource}`
  )
}

export class MissingNativeBindingError extends Error {
  /**
   * @param {unknown} cause napi's error, with every load attempt in its `cause` chain
   * @param {{ platform?: string, arch?: string, libc?: string, manifest?: object, installed?: (name: string) => boolean }} [host] for tests
   */
  constructor(cause, host = {}) {
    const platform = host.platform ?? process.platform
    const arch = host.arch ?? process.arch
    const libc = platform === "linux" ? (host.libc ?? linuxLibc()) : undefined
    const packageName = `@aml-jsx/sdk-${napiPlatform(platform, arch, libc)}`
    const where = `${platform}-${arch}${libc ? ` (${libc})` : ""}`
    super(`@aml-jsx/sdk found no native addon for ${where}: ${remedy(packageName, host.manifest ?? ownManifest(), host.installed ?? installed)}`, { cause })
    this.name = "MissingNativeBindingError"
    this.packageName = packageName
  }
}

/** napi's own "no binding loaded" failures; anything else (a WASI flavour error, …) passes through. */
export function isNapiMissingBinding(error) {
  const message = error instanceof Error ? error.message : ""
  return message.startsWith("Cannot find native binding") || message === "Failed to load native binding"
}

/**
 * The generated loader's module namespace, or a MissingNativeBindingError with napi's error
 * as its cause. `load` is the import itself, a parameter so a test can make it fail.
 */
export async function loadNativeBinding(load) {
  try {
    return await load()
  } catch (error) {
    if (isNapiMissingBinding(error)) throw new MissingNativeBindingError(error)
    throw error
  }
}
