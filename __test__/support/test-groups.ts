// Specs that need a service this machine may lack (scripts/test-groups.js: docker, moto,
// node22) take their `test`/`it` from here. With the service available it is vitest's own;
// without, every test is registered as skipped with "[skipped: needs <group>]" in its name,
// so vitest lists it as skipped (never passed), hooks of a file whose tests are all skipped do
// not run, and scripts/test-summary.js names the group in one line.
import { test } from "vitest"

// @ts-ignore -- a plain JS module of the repository's scripts
import { groupAvailable } from "../../scripts/test-groups.js"

export type TestGroup = "docker" | "moto" | "node22" | "root" | "chromium"

/** Whether this machine has what `group` needs (AML_WITHOUT_TEST_GROUPS=<group>,… says no). */
export const hasGroup = (group: TestGroup): boolean => groupAvailable(group)

/** The marker a skipped test's name carries; test-summary.js reads it back. */
export const skipMarker = (group: TestGroup): string => `[skipped: needs ${group}]`

/** vitest's `test` if every group is available, else a `test` that registers skipped tests. */
export function testNeeding(...groups: TestGroup[]): typeof test {
  const missing = groups.filter((group) => !groupAvailable(group))
  if (missing.length === 0) return test
  const marker = missing.map(skipMarker).join(" ")
  const skipped = (name: string, ...rest: unknown[]) => (test.skip as (...args: unknown[]) => void)(`${name} ${marker}`, ...rest)
  return Object.assign(skipped, { skip: skipped, only: skipped }) as unknown as typeof test
}

/** A suite title, carrying the group's marker when its `skipIf` condition skips it. */
export const titleNeeding = (title: string, available: boolean, group: TestGroup): string => (available ? title : `${title} ${skipMarker(group)}`)
