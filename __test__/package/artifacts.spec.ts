// The built addons that cannot run here (musl, Darwin; arm64 glibc outside the arm64 group) are
// inspected instead (scripts/check-artifacts.js): format, architecture, minimum OS, the only
// dynamic dependencies allowed, and the napi entry point exported; for Darwin also the install
// name and how the symbols bind (napi_* by flat lookup, to Node; nothing else). Each release addon under
// target/napi-release/<triple>/ is checked when it exists (`npm run pack:release -- --all`
// builds all six); a missing one is a named skip, never a pass.
import { join } from "node:path"

import { describe, expect, inject, it } from "vitest"

import { builtArtifacts, checkArtifact, EXPECTED, machOProblems } from "../../scripts/check-artifacts.js"

const built = new Map(builtArtifacts().map(({ triple, file }) => [triple, file]))

describe("release addon artifacts", () => {
  for (const triple of Object.keys(EXPECTED)) {
    it.skipIf(!built.has(triple))(`${triple}: format, arch, minimum OS, dynamic deps, napi export${triple.startsWith("darwin") ? ", install name, napi by flat lookup" : ""}`, () => {
      expect(checkArtifact(triple, built.get(triple) as string)).toEqual([])
    })
  }

  // The Darwin rules on the facts a wrong link produces (a cross link cannot be run here):
  // what the addons built before this check had (the build path as install name, framework
  // symbols left to flat lookup), and what linking against a Node library would give.
  it("a wrong Darwin link is reported", () => {
    const right = {
      format: "macho",
      cpu: "ARM64",
      minos: "11.0",
      dylibs: ["/usr/lib/libSystem.B.dylib"],
      exported: true,
      definesNapi: [],
      installName: "@rpath/aml-jsx-sdk.darwin-arm64.node",
      napiBinds: [{ symbol: "_napi_create_object", dylib: "flat-namespace" }],
      otherFlat: [],
    }
    expect(machOProblems("darwin-arm64", right)).toEqual([])
    const wrong = {
      ...right,
      installName: "/work/sdk/target/aarch64-apple-darwin/release/deps/libaml_jsx_sdk.dylib",
      napiBinds: [{ symbol: "_napi_create_object", dylib: "libnode" }],
      definesNapi: ["_napi_create_string_utf8"],
      otherFlat: ["_CFRelease"],
      dylibs: ["/usr/local/lib/libnode.127.dylib"],
    }
    expect(machOProblems("darwin-arm64", wrong)).toEqual([
      "loads /usr/local/lib/libnode.127.dylib",
      "install name /work/sdk/target/aarch64-apple-darwin/release/deps/libaml_jsx_sdk.dylib, expected @rpath/aml-jsx-sdk.darwin-arm64.node",
      "defines _napi_create_string_utf8: Node's napi_* must stay undefined",
      "_napi_create_object binds to libnode, not by flat lookup (-undefined dynamic_lookup)",
      "left to flat lookup: _CFRelease",
    ])
    expect(machOProblems("darwin-arm64", { ...right, napiBinds: [] })).toEqual(["binds no napi_* symbol"])
  })

  it("a wrong link is reported (the host's addon checked as another platform's)", () => {
    const { tarballs, prebuilt } = inject("packageTest")
    const host = tarballs.platform.match(/sdk-(linux-x64-gnu|linux-arm64-gnu)-/)?.[1]
    if (!host) return expect.fail(`no Linux host tarball: ${tarballs.platform}`)
    const addon = join(prebuilt ?? join(process.cwd(), "target", "napi-release"), `aml-jsx-sdk.${host}.node`)
    const other = host === "linux-x64-gnu" ? "linux-arm64-musl" : "linux-x64-musl"
    const problems = checkArtifact(other, addon)
    expect(problems).toContainEqual(expect.stringMatching(/^machine /))
    expect(problems).toContainEqual(expect.stringMatching(/^needs libc\.so\.6$|musl addon references GLIBC_/))
    expect(checkArtifact("darwin-arm64", addon)).toContain("not a Mach-O 64-bit dylib")
  })
})
