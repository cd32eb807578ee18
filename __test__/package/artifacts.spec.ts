// The built addons that cannot run here (musl, Darwin; arm64 glibc outside the arm64 group) are
// inspected instead (scripts/check-artifacts.js): format, architecture, minimum OS, the only
// dynamic dependencies allowed, and the napi entry point exported. Each release addon under
// target/napi-release/<triple>/ is checked when it exists (`npm run pack:release -- --all`
// builds all six); a missing one is a named skip, never a pass.
import { join } from "node:path"

import { describe, expect, inject, it } from "vitest"

import { builtArtifacts, checkArtifact, EXPECTED } from "../../scripts/check-artifacts.js"

const built = new Map(builtArtifacts().map(({ triple, file }) => [triple, file]))

describe("release addon artifacts", () => {
  for (const triple of Object.keys(EXPECTED)) {
    it.skipIf(!built.has(triple))(`${triple}: format, arch, minimum OS, dynamic deps, napi export`, () => {
      expect(checkArtifact(triple, built.get(triple) as string)).toEqual([])
    })
  }

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
