// <Skill src> naming a package directory (docs-next "What runs where": read one complete
// local package, stage it invocation-privately, register it without inlining the body):
// request.skills, the metadata-only fallback text, staging and removal around the provider
// call, path safety (links out of the package, `..`), bounds, SKILL.md rules, errors.
// Staging roots go to a test-private TMPDIR, so "nothing left behind" is checkable.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

import { afterAll, beforeEach, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Skill, System } from "@aml-jsx/sdk"

import { expectError, failureOf } from "./support/schemas.js"

const base = realpathSync(mkdtempSync(join(tmpdir(), "aml-skill-package-spec-")))
const staging = join(base, "tmp")
const cwd = join(base, "app")
mkdirSync(staging)
mkdirSync(cwd)
process.env.TMPDIR = staging
afterAll(() => rmSync(base, { force: true, recursive: true }))
beforeEach(() => expect(readdirSync(staging)).toEqual([]))

const MANIFEST = "---\nname: review\ndescription: Review a change\n  for correctness.\n---\n# Review\nRead references/checklist.md.\n"

/** Writes a package under cwd: `files` maps relative paths to contents. */
function pkg(name: string, files: Record<string, string | Buffer> = {}) {
  const root = join(cwd, name)
  for (const [rel, content] of Object.entries({ "SKILL.md": MANIFEST, ...files })) {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), content)
  }
  return root
}

function setup(run: (request: any) => unknown = () => undefined) {
  const calls: any[] = []
  const provider = { name: "p", async run(request: any) { calls.push(request); await run(request); return { text: "ok" } } }
  return { calls, runtime: new AmlRuntime({ agentProvider: provider, cwd }) }
}

const fail = async (runtime: AmlRuntime, tree: any) => failureOf(() => runtime.evaluate(tree))

describe("staging", () => {
  it("stages the complete package for the provider call only, and removes it after", async () => {
    const binary = Buffer.from([0, 1, 2, 255])
    const root = pkg("review-pkg", { "assets/logo.bin": binary, "references/checklist.md": "- tests\n", "scripts/run.sh": "#!/bin/sh\n" })
    execFileSync("chmod", ["+x", join(root, "scripts/run.sh")])
    let seen: any
    const { calls, runtime } = setup((request) => {
      const path = request.skills[0].path
      seen = {
        checklist: readFileSync(join(path, "references/checklist.md"), "utf8"),
        executable: (statSync(join(path, "scripts/run.sh")).mode & 0o100) !== 0,
        logo: readFileSync(join(path, "assets/logo.bin")),
        manifest: readFileSync(join(path, "SKILL.md"), "utf8"),
        rootMode: statSync(dirname(path)).mode & 0o777,
      }
    })
    await runtime.evaluate(<Agent><Skill src="./review-pkg" />Review the diff.</Agent>)
    const [request] = calls
    const path = request.skills[0].path
    expect(request.skills).toEqual([{ description: "Review a change for correctness.", name: "review", path }])
    expect(Object.isFrozen(request.skills) && Object.isFrozen(request.skills[0])).toBe(true)
    expect(path).toMatch(new RegExp(`^${staging}/aml-skill-[0-9a-f-]{36}/review$`))
    expect(request.prompt).toBe(`Skill: review\nDescription: Review a change for correctness.\nLocation: ${path}/SKILL.md\nReview the diff.`)
    expect(request.prompt).not.toContain("Read references/checklist.md")
    expect(seen).toEqual({ checklist: "- tests\n", executable: true, logo: binary, manifest: MANIFEST, rootMode: 0o700 })
    expect(existsSync(dirname(path))).toBe(false)
  })

  it("removes the staged copy when the provider fails or the run is aborted", async () => {
    pkg("fails")
    const boom = setup(() => { throw new Error("boom") })
    const error = await fail(boom.runtime, <Agent><Skill src="fails" />x</Agent>)
    expectError(error, EvaluationError, 'Agent "p" (span-1) failed')
    expect(existsSync(boom.calls[0].skills[0].path)).toBe(false)
    const controller = new AbortController()
    const aborted = setup(() => (controller.abort("halt"), Promise.reject("halt")))
    const wrapped = await failureOf(() => aborted.runtime.evaluate(<Agent><Skill src="fails" />x</Agent>, { signal: controller.signal }))
    expectError(wrapped, EvaluationError, 'Agent "p" (span-1) failed')
    expect(wrapped.cause).toBe("halt")
    expect(readdirSync(staging)).toEqual([])
  })

  it("stages nothing for an Agent that never runs", async () => {
    pkg("never")
    const { calls, runtime } = setup()
    const Throw = () => { throw new Error("sibling") }
    expect((await fail(runtime, <Agent><Skill src="never" /><Throw /></Agent>)).message).toBe("sibling")
    expect(calls).toHaveLength(0)
  })

  it("a staging failure stops the Agent before its provider", async () => {
    pkg("unstageable")
    const { calls, runtime } = setup()
    process.env.TMPDIR = join(base, "missing")
    try {
      const error = await fail(runtime, <Agent><Skill src="unstageable" /></Agent>)
      expect(error.message).toMatch(/^<Skill> could not stage package "review" at ".*\/missing\/aml-skill-.*\/review"$/)
      expect(error.cause.code).toBe("ENOENT")
    } finally {
      process.env.TMPDIR = staging
    }
    expect(calls).toHaveLength(0)
  })

  it("registers with its Agent only; <System> gets the fallback; inline Skills add no entry", async () => {
    pkg("sys")
    const { calls, runtime } = setup()
    await runtime.evaluate(<Agent><System><Skill src="sys" name="review" /></System><Agent><Skill>inline</Skill>child</Agent>go</Agent>)
    const [child, parent] = calls
    expect("skills" in child).toBe(false)
    expect(parent.skills.map((s: any) => s.name)).toEqual(["review"])
    expect(parent.system).toBe(`Skill: review\nDescription: Review a change for correctness.\nLocation: ${parent.skills[0].path}/SKILL.md`)
  })

  it("SKILL.md frontmatter: quoted, multi-line and block scalars, other keys ignored", async () => {
    pkg("forms", { "SKILL.md": "---\nname: 'forms'\nlicense: MIT\nmetadata:\n  a: b\ndescription: >-\n  Folded\n  text\n---\nbody" })
    pkg("quoted", { "SKILL.md": '\uFEFF---\r\nname: "quoted" # comment\r\ndescription: |\r\n  Line \\"one\\"\r\n  two\r\n...\r\n' })
    const { calls, runtime } = setup()
    await runtime.evaluate(<Agent><Skill src="forms" description="Folded text" /><Skill src="quoted" /></Agent>)
    expect(calls[0].skills.map((s: any) => [s.name, s.description])).toEqual([["forms", "Folded text"], ["quoted", 'Line \\"one\\" two']])
  })
})

describe("path safety and errors (the provider never runs)", () => {
  const outside = join(base, "outside.md")
  writeFileSync(outside, "secret")
  const cases: [string, () => void, string, string][] = [
    ["a link out of the package", () => symlinkSync(outside, join(pkg("p1"), "leak.md")), "p1", 'entry "leak.md" links outside the package'],
    ["a `..` link out of the package", () => symlinkSync("../../../outside.md", join(pkg("p2", { "docs/a.md": "a" }), "docs/up.md")), "p2", 'entry "docs/up.md" links outside the package'],
    ["a link to a directory", () => symlinkSync(".", join(pkg("p3"), "self")), "p3", 'entry "self" must be a regular file, a directory, or a link to a file in the package'],
    ["a FIFO", () => execFileSync("mkfifo", [join(pkg("p4"), "pipe")]), "p4", 'entry "pipe" must be a regular file, a directory, or a link to a file in the package'],
    ["too many entries", () => { const r = pkg("p5"); for (let i = 0; i < 1000; i++) writeFileSync(join(r, `f${i}`), "") }, "p5", "has more than 1000 entries"],
    ["too many bytes", () => truncateSync(join(pkg("p6", { big: "" }), "big"), 16 * 1024 * 1024 + 1), "p6", "is larger than 16777216 bytes"],
    ["no frontmatter", () => pkg("p7", { "SKILL.md": "# Title" }), "p7", "has an invalid SKILL.md: it must start with YAML frontmatter (---)"],
    ["unclosed frontmatter", () => pkg("p8", { "SKILL.md": "---\nname: a\n" }), "p8", "has an invalid SKILL.md: its YAML frontmatter is not closed (---)"],
    ["a bad name", () => pkg("p9", { "SKILL.md": "---\nname: Bad Name\ndescription: d\n---\n" }), "p9", "has an invalid SKILL.md: name must be 1-64 lowercase letters, digits and single hyphens"],
    ["no description", () => pkg("p10", { "SKILL.md": "---\nname: a\n---\n" }), "p10", "has an invalid SKILL.md: description must be non-empty text"],
    ["a long description", () => pkg("p11", { "SKILL.md": `---\nname: a\ndescription: ${"x".repeat(1025)}\n---\n` }), "p11", "has an invalid SKILL.md: description must be at most 1024 characters"],
    ["a duplicate key", () => pkg("p12", { "SKILL.md": "---\nname: a\nname: b\n---\n" }), "p12", 'has an invalid SKILL.md: frontmatter field "name" appears twice'],
    ["an unterminated quote", () => pkg("p14", { "SKILL.md": '---\nname: a\ndescription: "open\n---\n' }), "p14", 'has an invalid SKILL.md: frontmatter field "description" is not a valid YAML string'],
    ["a non-entry line", () => pkg("p13", { "SKILL.md": "---\njust text\n---\n" }), "p13", 'has an invalid SKILL.md: line 2 is not a "key: value" entry'],
  ]
  for (const [label, make, name, problem] of cases) {
    it(label, async () => {
      make()
      const { calls, runtime } = setup()
      expectError(await fail(runtime, <Agent><Skill src={name} /></Agent>), EvaluationError, `<Skill> package "${join(cwd, name)}" ${problem}`)
      expect(calls).toHaveLength(0)
    })
  }

  it("a link to a file inside the package is staged as a copy", async () => {
    const root = pkg("linked", { "real.md": "real" })
    symlinkSync("real.md", join(root, "alias.md"))
    const { runtime } = setup((request) => {
      const alias = join(request.skills[0].path, "alias.md")
      expect([readFileSync(alias, "utf8"), statSync(alias).isFile()]).toEqual(["real", true])
    })
    await runtime.evaluate(<Agent><Skill src="linked" /></Agent>)
  })

  it("the package root may itself be reached through `..` or a link (trusted src)", async () => {
    pkg("rooted")
    symlinkSync(join(cwd, "rooted"), join(base, "rooted-link"))
    const { calls, runtime } = setup()
    await runtime.evaluate(<Agent><Skill src="../rooted-link" /></Agent>)
    await runtime.evaluate(<Agent><Skill src="../app/rooted/" name="review" description="Review a change for correctness." /></Agent>)
    expect(calls.map((c) => c.skills[0].name)).toEqual(["review", "review"])
  })

  const messages: [string, () => void, any, string][] = [
    ["a directory without SKILL.md", () => mkdirSync(join(cwd, "q1")), <Skill src="q1" />, `<Skill> src directory "${join(cwd, "q1")}" must contain a SKILL.md file`],
    ["children with a package", () => pkg("q2"), <Skill src="q2">x</Skill>, "<Skill> package src does not accept children"],
    ["a name prop that differs", () => pkg("q3"), <Skill src="q3" name="other" />, "<Skill> name does not match the package SKILL.md"],
    ["a description prop that differs", () => pkg("q4"), <Skill src="q4" description="Other" />, "<Skill> description does not match the package SKILL.md"],
    ["SKILL.md not UTF-8", () => pkg("q5", { "SKILL.md": Buffer.from([0xff, 0xfe, 0x00]) }), <Skill src="q5" />, `<Skill> could not read local file "${join(cwd, "q5", "SKILL.md")}"`],
    ["two packages of one name", () => (pkg("q6"), pkg("q7")), [<Skill src="q6" />, <Skill src="q7" />], 'Agent declares duplicate Skill package "review"'],
  ]
  for (const [label, make, skill, message] of messages) {
    it(label, async () => {
      make()
      const { calls, runtime } = setup()
      expectError(await fail(runtime, <Agent>{skill}</Agent>), EvaluationError, message)
      expect(calls).toHaveLength(0)
    })
  }

  it("a package outside an Agent is rejected before anything is read", async () => {
    const { runtime } = setup()
    expectError(await fail(runtime, <Skill src="does-not-exist" />), EvaluationError, "<Skill> is only valid inside <Agent>")
  })
})
