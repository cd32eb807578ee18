// Global set-up of the package test (vitest.package.config.ts): packs the release once for
// both specs — the release build takes minutes — and installs the second Node.js the
// consumer project runs on. The specs read the result with `inject("packageTest")`.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import type { TestProject } from "vitest/node"

import { packRelease } from "../../scripts/pack-release.js"
import { type NodeRuntime, packageTestRuntimes } from "./node-runtimes.js"

export interface PackageTestContext {
  /** a fresh directory outside the repository for the specs' projects */
  work: string
  tarballs: { root: string; platform: string }
  runtimes: NodeRuntime[]
  /** the release workflow's build artifact, when the spec runs on it instead of building */
  prebuilt: string | undefined
}

declare module "vitest" {
  export interface ProvidedContext {
    packageTest: PackageTestContext
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  // The release workflow runs the package test on each platform against its build job's
  // artifact (a directory holding `<binary>.<triple>.node` and the loader) instead of building.
  const prebuilt = process.env.AML_PACKAGE_PREBUILT || undefined
  const work = mkdtempSync(join(tmpdir(), "aml-sdk-package-"))
  const tarballs = await packRelease({ destination: join(work, "tarballs"), prebuilt })
  const runtimes = await packageTestRuntimes()
  project.provide("packageTest", { prebuilt, runtimes, tarballs, work })
  return () => {
    if (!process.env.AML_KEEP_PACKAGE_TEST) rmSync(work, { force: true, recursive: true })
  }
}
