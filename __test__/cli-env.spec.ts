// Environment loading of `aml run` (cli.mdx "Environment loading"): the workflow
// directory's Vite-style files by NODE_ENV, the process environment winning, and
// `--runtime-env-file` over everything; plus the dotenv grammar itself.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"

import { expandValue, parseEnvText } from "../lib/cli/env-file.js"
import { fixture, removeTempProjects, runCli, tempProject } from "./support/cli.js"

afterAll(removeTempProjects)

/** A workflow directory with env-report.ts and the given env files. */
function project(files: Record<string, string>) {
  const dir = tempProject(files)
  copyFileSync(fixture("env-report.ts"), join(dir, "env-report.ts"))
  return dir
}

async function report(dir: string, args: string[] = [], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = await runCli(["run", join(dir, "env-report.ts"), ...args], options)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

const layers = {
  ".env": "BASE=base\nSHARED=env\nFROM_PROCESS=file\nOVERRIDE=file\n",
  ".env.local": "LOCAL=local\nSHARED=local\n",
  ".env.development": "MODE=development\nSHARED=development\n",
  ".env.development.local": "MODE_LOCAL=development-local\nSHARED=development-local\n",
  ".env.production": "MODE=production\nSHARED=production\n",
}

describe("workflow env files", () => {
  it("loads .env, .env.local, .env.<mode>, .env.<mode>.local with later files winning (mode development)", async () => {
    expect(await report(project(layers))).toMatchObject({
      BASE: "base",
      LOCAL: "local",
      MODE: "development",
      MODE_LOCAL: "development-local",
      SHARED: "development-local",
    })
  })

  it("takes the mode from NODE_ENV", async () => {
    const env = await report(project(layers), [], { env: { NODE_ENV: "production" } })
    expect(env).toMatchObject({ MODE: "production", MODE_LOCAL: null, SHARED: "production", LOCAL: "local" })
  })

  it("keeps existing process variables", async () => {
    const env = await report(project(layers), [], { env: { FROM_PROCESS: "process", SHARED: "process" } })
    expect(env).toMatchObject({ FROM_PROCESS: "process", SHARED: "process", BASE: "base" })
  })

  it("reads the workflow's directory, not the working directory", async () => {
    const dir = project({})
    const cwd = tempProject({ ".env": "BASE=from-cwd\n" })
    expect(await report(dir, [], { cwd })).toMatchObject({ BASE: null })
  })

  it("rejects the mode name local", async () => {
    const dir = project({})
    const result = await runCli(["run", join(dir, "env-report.ts")], { env: { NODE_ENV: "local" } })
    expect(result).toMatchObject({ code: 1, stdout: "" })
    expect(result.stderr).toBe('aml: "local" cannot be used as a mode name because it conflicts with the .local postfix for .env files.\n')
  })

  it("expands references, with the process environment first; single quotes stay literal", async () => {
    const dir = project({ ".env": "EXPANDED=${BASE}-${SHARED}-$MODE\nQUOTED='${BASE}'\nBASE=base\nSHARED=file\n" })
    const env = await report(dir, [], { env: { SHARED: "process" } })
    expect(env).toMatchObject({ EXPANDED: "base-process-", QUOTED: "${BASE}" })
  })
})

describe("--runtime-env-file", () => {
  it("overrides the process environment and the env files", async () => {
    const dir = project({ ...layers, ".env.ci": "OVERRIDE=runtime\nSHARED=runtime\nEXPANDED=${OVERRIDE}!\n" })
    const env = await report(dir, ["--runtime-env-file", ".env.ci"], { cwd: dir, env: { OVERRIDE: "process" } })
    expect(env).toMatchObject({ OVERRIDE: "runtime", SHARED: "runtime", EXPANDED: "runtime!", BASE: "base" })
  })

  it("resolves a relative path from the working directory first, then the workflow directory", async () => {
    const dir = project({ ".env.ci": "OVERRIDE=workflow-dir\n", ".env.only-here": "OVERRIDE=only-in-workflow-dir\n" })
    const cwd = tempProject({ ".env.ci": "OVERRIDE=cwd\n" })
    expect(await report(dir, ["--runtime-env-file", ".env.ci"], { cwd })).toMatchObject({ OVERRIDE: "cwd" })
    expect(await report(dir, ["--runtime-env-file=.env.only-here"], { cwd })).toMatchObject({ OVERRIDE: "only-in-workflow-dir" })
  })

  it("reports a runtime env file that exists in neither place", async () => {
    const dir = project({})
    const cwd = tempProject({})
    const result = await runCli(["run", join(dir, "env-report.ts"), "--runtime-env-file", "missing.env"], { cwd })
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: `aml: runtime env file not found: ${join(cwd, "missing.env")}\n` })
  })

  it("is loaded before the module, so top-level code sees it (the CI example of cli.mdx)", async () => {
    const root = tempProject({ ".env.ci": "RELEASE_CHANNEL=release-candidate\n" })
    mkdirSync(join(root, "src"))
    copyFileSync(fixture("entries.tsx"), join(root, "src/automation.tsx"))
    writeFileSync(join(root, "src/.env"), "RELEASE_CHANNEL=stable\n")
    const args = ["run", "./src/automation.tsx", "--entry", "releaseReview"]
    expect((await runCli(args, { cwd: root })).stdout).toBe("Review the stable release.\n")
    const result = await runCli([...args, "--runtime-env-file", ".env.ci", "--json", "--trace"], { cwd: root })
    expect(JSON.parse(result.stdout).result).toBe("Review the release-candidate release.")
  })
})

describe("dotenv grammar", () => {
  const parsed = (text: string) => Object.fromEntries(parseEnvText(text).map((entry) => [entry.key, entry.value]))

  it("reads assignments, export prefixes, comments and blank lines", () => {
    expect(parsed("# comment\n\nA=1\nexport B = two words  \nC=3 # trailing\nD=a#b\nE:  colon\n bad line\n")).toEqual({
      A: "1",
      B: "two words",
      C: "3",
      D: "a#b",
      E: "colon",
    })
  })

  it("reads quoted and multi-line values", () => {
    expect(parsed("A=\"line\\nbreak\"\nB='raw\\n # kept'\nC=`back`\nD=\"multi\nline\"\nE=\r\nF=\"unclosed\n")).toEqual({
      A: "line\nbreak",
      B: "raw\\n # kept",
      C: "back",
      D: "multi\nline",
      E: "",
      F: '"unclosed',
    })
  })

  it("expands ${X}, $X, defaults and escapes", () => {
    const lookup = (name: string) => ({ SET: "v", EMPTY: "" } as Record<string, string>)[name]
    expect(expandValue("${SET}/$SET/${MISSING}/${MISSING:-d}/${EMPTY:-d}/${EMPTY-d}/\\$SET", lookup)).toBe("v/v//d/d//$SET")
  })
})
