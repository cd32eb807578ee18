// `aml run` as a user meets it (INVENTORY CLI-1, cli.mdx): file resolution, export
// selection, loading TS/TSX, failures and their cause chains, stdout and --json shapes.
import { readFileSync } from "node:fs"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"

import { diagnostics, fixture, node22, removeTempProjects, repoRoot, runCli, tempProject } from "./support/cli.js"
import { testNeeding } from "./support/test-groups.js"

afterAll(removeTempProjects)

const version = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version

describe("the workflow file", () => {
  it("reports a missing file by its absolute path", async () => {
    const result = await runCli(["run", "no/such/workflow.tsx"])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(`aml: workflow file not found: ${join(repoRoot, "no/such/workflow.tsx")}\n`)
  })

  it("reports a directory", async () => {
    const result = await runCli(["run", "examples"])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(`aml: workflow path is not a file: ${join(repoRoot, "examples")}\n`)
  })

  it("loads relative .ts/.tsx imports (.js naming .ts, extensionless, .tsx)", async () => {
    const result = await runCli(["run", fixture("relative-imports.tsx")])
    expect(result).toMatchObject({ code: 0, stdout: "answer=42 [ok]!\n" })
  })

  it("maps stack traces to the authored TypeScript lines", async () => {
    const result = await runCli(["run", fixture("source-map.tsx")])
    expect(result.code).toBe(0)
    const [message, top, caller] = result.stdout.split("\n")
    expect(message).toBe("Error: boom: mapped")
    expect(top).toBe(`    at explode (${fixture("helpers/thrower.ts")}:7:9)`)
    expect(caller).toBe(`    at main (${fixture("source-map.tsx")}:6:5)`)
  })

  it("reports a syntax error with its location and the offending line, not a stack dump", async () => {
    const result = await runCli(["run", fixture("syntax-error.tsx")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(
      `aml: failed to load workflow file ${fixture("syntax-error.tsx")}\n  caused by: ${fixture("syntax-error.tsx")}:1:23: Unexpected token\n` +
        "    1 | export default <Agent>unterminated\n" +
        "      |                       ^\n",
    )
    expect(result.stderr).not.toContain("    at ")
  })

  it("reports a missing relative import", async () => {
    const result = await runCli(["run", fixture("missing-import.ts")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(
      `aml: failed to load workflow file ${fixture("missing-import.ts")}\n` +
        `  caused by: Cannot find module '${fixture("helpers/does-not-exist.js")}' imported from ${fixture("missing-import.ts")}\n`,
    )
  })

  // A missing import sends the workflow through the module hooks (the in-process loader
  // declines), whose transformer was `require`d on Node's loader thread: Node 22 answered
  // "The resolveSync() method is not implemented" instead of the missing module.
  // (testNeeding's skip has no `.each`: a plain loop keeps the spec loadable without Node 22.)
  for (const [how, env] of [
    ["the in-process loader declines", {}],
    ["the module hooks load everything", { AML_RUN_LOADER: "hooks" }],
  ] as const) {
    testNeeding("node22")(`on Node 22 too, a missing relative import names the module and its importer (${how})`, async () => {
      const result = await runCli(["run", fixture("missing-import.ts")], { env, node: node22 })
      expect(result).toMatchObject({ code: 1, stdout: "" })
      expect(result.stderr).toBe(
        `aml: failed to load workflow file ${fixture("missing-import.ts")}\n` +
          `  caused by: Cannot find module '${fixture("helpers/does-not-exist.js")}' imported from ${fixture("missing-import.ts")}\n`,
      )
    })
  }

  testNeeding("node22")("on Node 22, the module hooks load a TSX workflow", async () => {
    const result = await runCli(["run", fixture("relative-imports.tsx")], { env: { AML_RUN_LOADER: "hooks" }, node: node22 })
    expect(result).toMatchObject({ code: 0, stdout: "answer=42 [ok]!\n" })
  })

  it("reports a module that throws while loading", async () => {
    const result = await runCli(["run", fixture("throws-at-import.ts")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(
      `aml: failed to load workflow file ${fixture("throws-at-import.ts")}\n  caused by: configuration is incomplete\n`,
    )
  })

  it("resolves @aml-jsx/sdk to the CLI's own copy for a file outside any project", async () => {
    const dir = tempProject({
      "outside.tsx": 'import { Agent } from "@aml-jsx/sdk"\nimport { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"\n' +
        'export default <Agent provider={new DeterministicAgentProvider()}>from /tmp</Agent>\n',
    })
    const result = await runCli(["run", "outside.tsx"], { cwd: dir })
    expect(result).toMatchObject({ code: 0, stdout: "from /tmp\n" })
  })

  it("runs a plain JavaScript workflow", async () => {
    const dir = tempProject({ "plain.mjs": 'export default ["plain ", Promise.resolve("js")]\n' })
    expect(await runCli(["run", "plain.mjs"], { cwd: dir })).toMatchObject({ code: 0, stdout: "plain js\n" })
  })
})

describe("export selection", () => {
  it("prefers default, then main()", async () => {
    const dir = tempProject({ "both.ts": 'export default "default"\nexport function main() { return "main" }\n', "main.ts": 'export function main() { return "main" }\n' })
    expect((await runCli(["run", "both.ts"], { cwd: dir })).stdout).toBe("default\n")
    expect((await runCli(["run", "main.ts"], { cwd: dir })).stdout).toBe("main\n")
  })

  it("--entry and -e select a named export; functions are called and promises awaited", async () => {
    const file = fixture("entries.tsx")
    expect((await runCli(["run", file, "--entry", "releaseReview"])).stdout).toBe("Review the preview release.\n")
    expect((await runCli(["run", file, "-e", "later"])).stdout).toBe("from a promise\n")
    expect((await runCli(["run", file, "--entry=asyncMain"])).stdout).toBe("built after env loading\n")
    expect((await runCli(["run", file])).stdout).toBe("main() was called\n")
  })

  it("names the available exports when --entry is missing", async () => {
    const result = await runCli(["run", fixture("entries.tsx"), "--entry", "nope"])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(
      `aml: file "${fixture("entries.tsx")}" does not export "nope". Available exports: asyncMain, later, main, releaseReview\n`,
    )
  })

  it("asks for default or main() when neither is usable", async () => {
    const result = await runCli(["run", fixture("named-only.tsx")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe(
      `aml: file "${fixture("named-only.tsx")}" must export either "default" or "main()". Available exports: alpha, main, zeta\n`,
    )
    const empty = await runCli(["run", fixture("empty.ts")])
    expect(empty.stderr).toBe(`aml: file "${fixture("empty.ts")}" must export either "default" or "main()". Available exports: none\n`)
  })
})

describe("failures", () => {
  it("prints the error with its cause chain and exits 1", async () => {
    const result = await runCli(["run", fixture("throws.tsx")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toMatch(/^aml: starting run ([0-9a-f-]{36}) for .*throws\.tsx\naml: finished run \1 \(error\) in \d+(\.\d)?ms\n/)
    expect(diagnostics(result.stderr)).toBe(
      "aml: could not write the report\n  caused by: storage layer failed\n  caused by: disk quota exceeded\n",
    )
  })

  it("lists what an AggregateError aggregates", async () => {
    const result = await runCli(["run", fixture("parallel-fails.tsx")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(diagnostics(result.stderr)).toBe("aml: AML Parallel branches failed\n  including: first branch failed\n  including: third branch failed\n")
  })

  it("reports a value that is not AML with the runtime's EvaluationError message", async () => {
    const result = await runCli(["run", fixture("invalid-value.tsx")])
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(diagnostics(result.stderr)).toBe("aml: AML cannot render a value of type object\n")
  })

  it("--json prints nothing on stdout for a failed run", async () => {
    const result = await runCli(["run", fixture("throws.tsx"), "--json"])
    expect(result).toMatchObject({ code: 1, stdout: "" })
  })
})

describe("output", () => {
  it("--json prints the success envelope", async () => {
    const result = await runCli(["run", fixture("entries.tsx"), "--entry", "releaseReview", "--json"])
    expect(result.code).toBe(0)
    const envelope = JSON.parse(result.stdout)
    expect(Object.keys(envelope)).toEqual(["runId", "durationMs", "success", "result"])
    expect(envelope).toEqual({ runId: expect.stringMatching(/^[0-9a-f-]{36}$/), durationMs: expect.any(Number), success: true, result: "Review the preview release." })
    expect(Math.round(envelope.durationMs * 10) / 10).toBe(envelope.durationMs)
    expect(result.stdout).toBe(`${JSON.stringify(envelope, null, 2)}\n`)
    expect(result.stderr).toContain(`aml: starting run ${envelope.runId} for ${fixture("entries.tsx")}\n`)
    expect(result.stderr).toMatch(new RegExp(`aml: finished run ${envelope.runId} \\(ok\\) in \\d+(\\.\\d)?ms\n$`))
  })

  it("--trace writes metadata-only trace lines to stderr", async () => {
    const result = await runCli(["run", fixture("traced.tsx"), "--trace"])
    expect(result).toMatchObject({ code: 0, stdout: "SECRET-ANSWER\n" })
    const lines = diagnostics(result.stderr).split("\n")
    expect(lines[0]).toBe("▶ evaluation evaluate")
    expect(lines).toContain("  ▶ agent Agent")
    expect(lines.some((line) => /^  ✓ agent Agent \S+ provider="traced"/.test(line))).toBe(true)
    expect(result.stderr).toMatch(/✓ evaluation evaluate \S+\n$/)
    expect(result.stderr).not.toContain("SECRET")
  })

  it("--capture-content implies --trace and includes content", async () => {
    const result = await runCli(["run", fixture("traced.tsx"), "--capture-content"])
    expect(result).toMatchObject({ code: 0, stdout: "SECRET-ANSWER\n" })
    expect(result.stderr).toContain('prompt="SECRET-PROMPT"')
    expect(result.stderr).toContain('output="SECRET-ANSWER"')
    expect(result.stderr).toContain("▶ evaluation evaluate")
  })
})

describe("command line", () => {
  it("prints help with no arguments, -h and --help (exit 0)", async () => {
    for (const args of [[], ["-h"], ["--help"], ["run", "--help"]]) {
      const result = await runCli(args)
      expect(result).toMatchObject({ code: 0, stderr: "" })
      expect(result.stdout.startsWith(`aml/${version}\n\nUsage:\n  $ aml run <workflowFile> [options]\n`)).toBe(true)
      for (const option of ["-e, --entry <name>", "--runtime-env-file <file>", "--trace", "--capture-content", "--json", "-h, --help", "-v, --version"]) {
        expect(result.stdout).toContain(`  ${option} `)
      }
    }
  })

  it("prints the CAC-style version with -v and --version", async () => {
    for (const flag of ["-v", "--version"]) {
      const result = await runCli([flag])
      expect(result).toMatchObject({ code: 0, stderr: "" })
      expect(result.stdout).toBe(`aml/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
    }
  })

  it("rejects unknown options, unknown commands and a missing file argument", async () => {
    const cases: [string[], string][] = [
      [["run", "w.tsx", "--nope"], "Unknown option `--nope`"],
      [["run", "w.tsx", "-x"], "Unknown option `-x`"],
      [["deploy", "w.tsx"], "unknown command: deploy"],
      [["run"], "missing required args for command `run <workflowFile>`"],
      [["run", "w.tsx", "--entry"], "option `-e, --entry <name>` value is missing"],
      [["run", "w.tsx", "--runtime-env-file"], "option `--runtime-env-file <file>` value is missing"],
      [["run", "w.tsx", "--json=1"], "option `--json` does not take a value"],
      [["run", "a.tsx", "b.tsx"], "unexpected argument for command `run <workflowFile>`: b.tsx"],
      // Another command's option is unknown to this one.
      [["run", "w.tsx", "--port", "3"], "Unknown option `--port`"],
      [["run", "w.tsx", "--keep=2"], "Unknown option `--keep`"],
      [["studio", "--journal", "j.json"], "Unknown option `--journal`"],
      [["runs", "prune", "--trace"], "Unknown option `--trace`"],
    ]
    for (const [args, message] of cases) {
      const result = await runCli(args)
      expect(result).toMatchObject({ code: 1, stdout: "", stderr: `aml: ${message}\n` })
    }
  })
})
