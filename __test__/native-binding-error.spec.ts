// The error a consumer sees when no native addon loads (issue 25 §5): its class, its text
// per case, napi's error kept as `cause`, and the real loader failing in a child process.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { describe, expect, test } from "vitest"

import { isNapiMissingBinding, loadNativeBinding, MissingNativeBindingError, napiPlatform } from "../lib/core/native-binding-error.js"

const repo = fileURLToPath(new URL("..", import.meta.url))
const SOURCE = "build the addon from source: https://github.com/aml-jsx/sdk-rs#build-the-addon-from-source"

/** An error shaped as napi's generated loader throws it, with its attempts chained as cause. */
function napiError(): Error {
  const error = new Error(
    "Cannot find native binding. npm has a bug related to optional dependencies (https://github.com/npm/cli/issues/4828). " +
      "Please try `npm i` again after removing both package-lock.json and node_modules directory.",
  )
  error.cause = new Error("Cannot find module '@aml-jsx/sdk-wasm32-wasi'")
  return error
}

describe("MissingNativeBindingError", () => {
  test("names the platform, the package and both install routes when the package is absent", () => {
    const cause = napiError()
    const error = new MissingNativeBindingError(cause, { platform: "linux", arch: "arm64", libc: "musl", manifest: { version: "1.2.3" } })
    expect(error).toBeInstanceOf(MissingNativeBindingError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe("MissingNativeBindingError")
    expect(error.packageName).toBe("@aml-jsx/sdk-linux-arm64-musl")
    expect(error.cause).toBe(cause)
    expect(error.message).toBe(
      "@aml-jsx/sdk found no native addon for linux-arm64 (musl): the platform package @aml-jsx/sdk-linux-arm64-musl is not installed. " +
        "Install it next to @aml-jsx/sdk at the same version, 1.2.3 — with the release tarballs, in one command: " +
        "npm install ./aml-jsx-sdk-1.2.3.tgz ./aml-jsx-sdk-linux-arm64-musl-1.2.3.tgz " +
        `(from the registry, once published: npm install @aml-jsx/sdk-linux-arm64-musl@1.2.3) — or ${SOURCE}`,
    )
  })

  test("says when the release has no package for the platform", () => {
    const manifest = { version: "1.2.3", optionalDependencies: { "@aml-jsx/sdk-linux-x64-gnu": "1.2.3" } }
    const error = new MissingNativeBindingError(napiError(), { platform: "freebsd", arch: "x64", manifest })
    expect(error.message).toBe(
      `@aml-jsx/sdk found no native addon for freebsd-x64: this release has no platform package for it (@aml-jsx/sdk-freebsd-x64). Or ${SOURCE}`,
    )
  })

  // Windows is not built (issue 35): its users get this error, not a crash in napi's loader.
  test("on Windows, says the release has no package for it", () => {
    const unix = ["linux-x64-gnu", "linux-x64-musl", "linux-arm64-gnu", "linux-arm64-musl", "darwin-x64", "darwin-arm64"]
    const manifest = { version: "1.2.3", optionalDependencies: Object.fromEntries(unix.map((triple) => [`@aml-jsx/sdk-${triple}`, "1.2.3"])) }
    const error = new MissingNativeBindingError(napiError(), { platform: "win32", arch: "x64", manifest })
    expect(error.name).toBe("MissingNativeBindingError")
    expect(error.message).toBe(
      `@aml-jsx/sdk found no native addon for win32-x64: this release has no platform package for it (@aml-jsx/sdk-win32-x64-msvc). Or ${SOURCE}`,
    )
  })

  test("says when the platform package is installed but its addon did not load", () => {
    const host = { platform: "darwin", arch: "arm64", manifest: { version: "1.2.3" }, installed: (name: string) => name === "@aml-jsx/sdk-darwin-arm64" }
    const error = new MissingNativeBindingError(napiError(), host)
    expect(error.message).toBe(
      "@aml-jsx/sdk found no native addon for darwin-arm64: @aml-jsx/sdk-darwin-arm64 is installed but its addon did not load (see the cause chain). " +
        `Reinstall it at version 1.2.3, or ${SOURCE}`,
    )
  })

  test("napi platform names follow napi's triples", () => {
    expect(napiPlatform("linux", "x64", "glibc")).toBe("linux-x64-gnu")
    expect(napiPlatform("linux", "x64", "musl")).toBe("linux-x64-musl")
    expect(napiPlatform("darwin", "arm64")).toBe("darwin-arm64")
    expect(napiPlatform("win32", "x64")).toBe("win32-x64-msvc")
  })
})

describe("loadNativeBinding", () => {
  test("replaces napi's missing-binding error and keeps it as the cause", async () => {
    const cause = napiError()
    const failure = await loadNativeBinding(async () => {
      throw cause
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(MissingNativeBindingError)
    expect((failure as Error).cause).toBe(cause)
  })

  test("passes any other failure through unchanged", async () => {
    const other = new Error('Unsupported WASI flavor "x". Available flavors: wasm32-wasi')
    await expect(loadNativeBinding(async () => Promise.reject(other))).rejects.toBe(other)
    expect(isNapiMissingBinding(other)).toBe(false)
    expect(isNapiMissingBinding(new Error("Failed to load native binding"))).toBe(true)
  })

  test("returns the loaded module", async () => {
    const module = { primitiveKinds: () => [] }
    await expect(loadNativeBinding(async () => module)).resolves.toBe(module)
  })
})

test("importing the package with no loadable addon fails with the error, napi's attempts as its cause", () => {
  // NAPI_RS_NATIVE_LIBRARY_PATH replaces every candidate of the generated loader with one
  // path; a missing file makes the real loader throw its "Cannot find native binding".
  const probe = `
    try { await import(${JSON.stringify(new URL("../index.js", import.meta.url).href)}) }
    catch (error) {
      console.log(JSON.stringify({ name: error.name, message: error.message, cause: error.cause?.message, first: error.cause?.cause?.message }))
    }`
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
    cwd: repo,
    encoding: "utf8",
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: "/nonexistent/aml-jsx-sdk.node" },
  })
  expect(result.stderr).toBe("")
  const outcome = JSON.parse(result.stdout)
  const version = JSON.parse(spawnSync(process.execPath, ["-p", "JSON.stringify(require('./package.json').version)"], { cwd: repo, encoding: "utf8" }).stdout)
  const platform = napiPlatform()
  const where = process.platform === "linux" ? `${process.platform}-${process.arch} (${platform.endsWith("-musl") ? "musl" : "glibc"})` : `${process.platform}-${process.arch}`
  expect(outcome.name).toBe("MissingNativeBindingError")
  expect(outcome.message).toBe(
    `@aml-jsx/sdk found no native addon for ${where}: the platform package @aml-jsx/sdk-${platform} is not installed. ` +
      `Install it next to @aml-jsx/sdk at the same version, ${version} — with the release tarballs, in one command: ` +
      `npm install ./aml-jsx-sdk-${version}.tgz ./aml-jsx-sdk-${platform}-${version}.tgz ` +
      `(from the registry, once published: npm install @aml-jsx/sdk-${platform}@${version}) — or ${SOURCE}`,
  )
  expect(outcome.cause).toMatch(/^Cannot find native binding\. /)
  expect(outcome.first).toMatch(/@aml-jsx\/sdk-wasm32-wasi/)
})
