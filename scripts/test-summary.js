// Prints the JS suite's totals as one plain closing line ("vitest: N passed, N failed,
// N skipped") from vitest's JSON report, so CI logs end with a count any reader understands,
// then one line per test group skipped for a missing service (the "[skipped: needs <group>]"
// marker of __test__/support/test-groups.ts) saying what the group needs, and one line for
// the other skipped tests (live services without credentials and the like).
//
// A skipped group fails the run where everything must run (AML_REQUIRE_TEST_GROUPS=1, CI=true).
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

import { GROUPS, requireAll } from "./test-groups.js"

const MARKER = /\[skipped: needs (\w+)\]/g

/** `{ totals, groups: { name: count }, others: [names] }` from a vitest JSON report. */
export function summarize(report) {
  const groups = {}
  const others = []
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== "pending" && test.status !== "skipped" && test.status !== "todo") continue
      const needs = [...test.fullName.matchAll(MARKER)].map((match) => match[1])
      for (const group of needs) groups[group] = (groups[group] ?? 0) + 1
      if (needs.length === 0) others.push(test.title)
    }
  }
  const skipped = report.numPendingTests + report.numTodoTests
  return { totals: { passed: report.numPassedTests, failed: report.numFailedTests, skipped, total: report.numTotalTests }, groups, others }
}

/** The lines printed for `summary`. */
export function summaryLines({ totals, groups, others }) {
  const lines = [`vitest: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`]
  for (const [group, count] of Object.entries(groups).sort()) {
    const needs = GROUPS[group]?.needs ?? group
    lines.push(`vitest: ${count} skipped in test group ${group}: needs ${needs}`)
  }
  if (others.length > 0) lines.push(`vitest: ${others.length} other skipped (each names what it needs): ${others.join("; ")}`)
  return lines
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const summary = summarize(JSON.parse(readFileSync(process.argv[2], "utf8")))
  for (const line of summaryLines(summary)) console.log(line)
  if (summary.totals.total === 0) {
    console.error("vitest ran no test")
    process.exit(1)
  }
  if (Object.keys(summary.groups).length > 0 && requireAll()) {
    console.error("test groups were skipped although AML_REQUIRE_TEST_GROUPS=1 or CI=true")
    process.exit(1)
  }
}
