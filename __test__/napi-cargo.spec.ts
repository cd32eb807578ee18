// scripts/napi-cargo.js, the cargo `napi build` runs (issue 25 §1): napi's forced-rebuild
// variable is replayed on the builds where napi leaves it unset, so cargo sees it change only
// when napi asks for a rebuild, never on an unchanged second build.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, describe, expect, test } from "vitest"

// @ts-ignore -- a plain JS module of the repository's scripts
import { buildBanner } from "../scripts/build-addon.js"
// @ts-ignore -- a plain JS module of the repository's scripts
import { stableForceEnv } from "../scripts/napi-cargo.js"

const script = fileURLToPath(new URL("../scripts/napi-cargo.js", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "aml-napi-cargo-"))
const FORCE = "NAPI_FORCE_BUILD_AML_JSX_SDK"

afterAll(() => rmSync(scratch, { force: true, recursive: true }))

describe("stableForceEnv", () => {
  test("a build napi forced records the value; the next, unforced build gets the same value", () => {
    const folder = join(scratch, "napi-rs", "aml-jsx-sdk-0123")
    const first = stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: folder, [FORCE]: "1000", PATH: "/bin" })
    expect(first[FORCE]).toBe("1000")
    expect(existsSync(`${folder}.force-build.json`)).toBe(true)
    // napi leaves it unset once its type-definition folder holds the crate's file.
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: folder, PATH: "/bin" })[FORCE]).toBe("1000")
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: folder, PATH: "/bin" })[FORCE]).toBe("1000")
    // A new request (the type definitions went missing) changes it, so cargo rebuilds once.
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: folder, [FORCE]: "2000" })[FORCE]).toBe("2000")
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: folder })[FORCE]).toBe("2000")
  })

  test("each build setting (its own type-definition folder) keeps its own value", () => {
    const dev = join(scratch, "napi-rs", "aml-jsx-sdk-aaaa")
    const release = join(scratch, "napi-rs", "aml-jsx-sdk-bbbb")
    stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: dev, [FORCE]: "1" })
    stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: release, [FORCE]: "2" })
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: dev })[FORCE]).toBe("1")
    expect(stableForceEnv({ NAPI_TYPE_DEF_TMP_FOLDER: release })[FORCE]).toBe("2")
  })

  test("a cargo call outside a napi build is left alone", () => {
    expect(stableForceEnv({ PATH: "/bin" })).toEqual({ PATH: "/bin" })
  })
})

test("as napi's CARGO it runs the real cargo with the arguments and the replayed variable", () => {
  const folder = join(scratch, "napi-rs", "aml-jsx-sdk-cccc")
  writeFileSync(`${folder}.force-build.json`, JSON.stringify({ [FORCE]: "42" }))
  const fake = join(scratch, "fake-cargo.sh")
  writeFileSync(fake, `#!/bin/sh\necho "args=$* force=$${FORCE} cargo=\${CARGO-unset}"\nexit 3\n`, { mode: 0o755 })
  const result = spawnSync(script, ["build", "--release"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, NAPI_TYPE_DEF_TMP_FOLDER: folder, CARGO: script, AML_NAPI_REAL_CARGO: fake },
  })
  expect(result.stdout).toBe("args=build --release force=42 cargo=unset\n")
  expect(result.status).toBe(3)
})

test("a build says in one line what it builds and how long that takes", () => {
  const line = buildBanner(["--platform", "--release", "--no-default-features", "--output-dir", "native"])
  expect(line).toMatch(/^build-addon: building the native addon \(release, without test hooks\) into native\/ — about \d+ min from scratch/)
  expect(line).not.toContain("\n")
  // The same setting as the last build: no warning; the other setting: the recompile is announced.
  expect(buildBanner(["--release", "--output-dir", "native"], "release, with test hooks")).toContain("seconds when nothing changed")
  expect(buildBanner(["--release", "--no-default-features", "--output-dir", "native"], "release, with test hooks")).toBe(
    "build-addon: building the native addon (release, without test hooks) into native/ — the last build was release, with test hooks, so cargo compiles the addon crate again (about 2 min on 2 cores) even if nothing changed",
  )
})
