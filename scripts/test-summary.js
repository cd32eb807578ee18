// Prints the JS suite's totals as one plain closing line ("vitest: N passed, N failed,
// N skipped") from vitest's JSON report, so CI logs end with a count any reader understands.
import { readFileSync } from "node:fs"

const report = JSON.parse(readFileSync(process.argv[2], "utf8"))
const skipped = report.numPendingTests + report.numTodoTests
console.log(`vitest: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`)
if (report.numTotalTests === 0) {
  console.error("vitest ran no test")
  process.exit(1)
}
