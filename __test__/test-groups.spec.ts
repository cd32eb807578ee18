// scripts/test-groups.js and scripts/test-summary.js (issue 25 §6): a group whose service is
// missing is skipped with one line naming what it needs, its tests are reported as skipped,
// and where everything must run (CI) a skipped group fails the run.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { describe, expect, test } from "vitest"

// @ts-ignore -- a plain JS module of the repository's scripts
import { skipLine } from "../scripts/test-groups.js"
// @ts-ignore -- a plain JS module of the repository's scripts
import { summarize, summaryLines } from "../scripts/test-summary.js"
import { skipMarker } from "./support/test-groups.js"

const groups = fileURLToPath(new URL("../scripts/test-groups.js", import.meta.url))
const summaryScript = fileURLToPath(new URL("../scripts/test-summary.js", import.meta.url))
const printEnv = ["-e", "console.log('ran', process.env.AML_TEST_SKIP_MOTO ?? '-')"]

function runScript(script: string, args: string[], env: Record<string, string>) {
  // The outer run's CI settings must not decide these cases.
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "CI" && key !== "AML_REQUIRE_TEST_GROUPS" && key !== "AML_WITHOUT_TEST_GROUPS"))
  return spawnSync(process.execPath, [script, ...args], { encoding: "utf8", env: { ...base, ...env } })
}
const groupsCli = (args: string[], env: Record<string, string>) => runScript(groups, args, env)

describe("scripts/test-groups.js", () => {
  test("run: a missing group prints its one line instead of running the command", () => {
    const result = groupsCli(["run", "docker", "--", process.execPath, ...printEnv], { AML_WITHOUT_TEST_GROUPS: "docker" })
    expect(result.stdout).toBe(`${skipLine("docker")}\n`)
    expect(skipLine("docker")).toMatch(/^skipped test group docker \(.+\): needs a Docker daemon: /)
    expect(result.status).toBe(0)
  })

  test("run: an available group runs the command", () => {
    const result = groupsCli(["run", "node22", "--", process.execPath, ...printEnv], { AML_WITHOUT_TEST_GROUPS: "docker" })
    if (process.platform === "linux" && process.arch === "x64") expect(result.stdout).toBe("ran -\n")
    else expect(result.stdout).toBe(`${skipLine("node22")}\n`)
  })

  test("arm64: skipped with its one line where its set-up cannot run, an error under CI", () => {
    const skipped = groupsCli(["run", "arm64", "--", process.execPath, ...printEnv], { AML_WITHOUT_TEST_GROUPS: "arm64" })
    expect(skipped.stdout).toBe(`${skipLine("arm64")}\n`)
    expect(skipLine("arm64")).toMatch(/^skipped test group arm64 \(linux-arm64-gnu: .+\): needs Linux x64 and root with apt-get/)
    expect(skipped.status).toBe(0)
    const ci = groupsCli(["run", "arm64", "--", process.execPath, ...printEnv], { AML_REQUIRE_TEST_GROUPS: "1", AML_WITHOUT_TEST_GROUPS: "arm64" })
    expect(ci.status).toBe(1)
  })

  test("env: the command still runs, told which group to skip", () => {
    const result = groupsCli(["env", "moto", "--", process.execPath, ...printEnv], { AML_WITHOUT_TEST_GROUPS: "moto" })
    expect(result.stdout).toBe(`${skipLine("moto")}\nran 1\n`)
    expect(result.status).toBe(0)
  })

  test("with CI=true or AML_REQUIRE_TEST_GROUPS=1 a skipped group is an error", () => {
    for (const env of [{ CI: "true" }, { AML_REQUIRE_TEST_GROUPS: "1" }]) {
      const result = groupsCli(["run", "docker", "--", process.execPath, ...printEnv], { ...env, AML_WITHOUT_TEST_GROUPS: "docker" })
      expect(result.stdout).not.toContain("ran")
      expect(result.status).toBe(1)
    }
  })
})

describe("scripts/test-summary.js", () => {
  const report = {
    numPassedTests: 3,
    numFailedTests: 0,
    numPendingTests: 4,
    numTodoTests: 0,
    numTotalTests: 7,
    testResults: [
      {
        assertionResults: [
          { status: "passed", title: "a", fullName: "a" },
          { status: "skipped", title: `put ${skipMarker("moto")}`, fullName: `S3 put ${skipMarker("moto")}` },
          { status: "skipped", title: `get ${skipMarker("moto")}`, fullName: `S3 get ${skipMarker("moto")}` },
          { status: "pending", title: `durable ${skipMarker("moto")} ${skipMarker("node22")}`, fullName: `durable ${skipMarker("moto")} ${skipMarker("node22")}` },
          { status: "skipped", title: "live Modal (needs MODAL_TOKEN_ID)", fullName: "live Modal (needs MODAL_TOKEN_ID)" },
        ],
      },
    ],
  }

  test("one line of totals, one per skipped group with what it needs, one for the rest", () => {
    const lines = summaryLines(summarize(report))
    expect(lines[0]).toBe("vitest: 3 passed, 0 failed, 4 skipped")
    expect(lines[1]).toMatch(/^vitest: 3 skipped in test group moto: needs the moto S3 server/)
    expect(lines[2]).toMatch(/^vitest: 1 skipped in test group node22: needs Linux x64/)
    expect(lines[3]).toBe("vitest: 1 other skipped (each names what it needs): live Modal (needs MODAL_TOKEN_ID)")
    expect(lines).toHaveLength(4)
  })

  test("a skipped group fails the summary under CI=true, not elsewhere", () => {
    const dir = mkdtempSync(join(tmpdir(), "aml-summary-"))
    try {
      const file = join(dir, "report.json")
      writeFileSync(file, JSON.stringify(report))
      expect(runScript(summaryScript, [file], {}).status).toBe(0)
      const ci = runScript(summaryScript, [file], { CI: "true" })
      expect(ci.stderr).toContain("test groups were skipped although AML_REQUIRE_TEST_GROUPS=1 or CI=true")
      expect(ci.status).toBe(1)
    } finally {
      rmSync(dir, { force: true, recursive: true })
    }
  })
})
