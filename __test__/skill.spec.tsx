// <Skill> inline and file forms (INVENTORY SK-1), the docs-next placement rule, cancellation
// and the `skill` span (§2.3). The package form is skill-package.spec.tsx. Documented
// examples come from docs/reference/primitives/skill.mdx and skill/capabilities-and-
// resources.md (paths under /work/shared/reference/), with inline deterministic providers.
import { execFileSync } from "node:child_process"
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

import { afterAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Parallel, Skill, System, evaluate } from "@aml-jsx/sdk"

import { expectError, failureOf } from "./support/schemas.js"

const dir = realpathSync(mkdtempSync(join(tmpdir(), "aml-skill-spec-")))
mkdirSync(join(dir, "skills"))
writeFileSync(join(dir, "skills/editorial.md"), "Use active voice.")
writeFileSync(join(dir, "skills/project-conventions.md"), "Run the linter before committing.")
afterAll(() => rmSync(dir, { force: true, recursive: true }))

/** An inline deterministic provider: answers "ok" and records every request. */
function recorder() {
  const calls: any[] = []
  return { calls, provider: { name: "p", async run(request: any) { calls.push(request); return { text: "ok" } } } }
}

function setup(options: Record<string, unknown> = {}) {
  const { calls, provider } = recorder()
  return { calls, runtime: new AmlRuntime({ agentProvider: provider, cwd: dir, ...options }) }
}

describe("documented examples", () => {
  it("skill.mdx: inline Skill with name and description, prepended as labels", async () => {
    const { calls, runtime } = setup()
    await runtime.evaluate(
      <Agent>
        <Skill name="House style" description="Editorial rules for release notes">
          Prefer concrete examples and short sections.
        </Skill>
        Rewrite the release note.
      </Agent>,
    )
    expect(calls[0].prompt).toBe(
      "Skill: House style\nDescription: Editorial rules for release notes\n\nPrefer concrete examples and short sections.Rewrite the release note.",
    )
    expect("skills" in calls[0]).toBe(false)
  })

  it("skill.mdx: <Skill src> reads a local file relative to the runtime cwd", async () => {
    const { calls, runtime } = setup()
    await runtime.evaluate(
      <Agent>
        <Skill src="./skills/editorial.md" />
        Rewrite the release note.
      </Agent>,
    )
    expect(calls[0].prompt).toBe("Use active voice.Rewrite the release note.")
  })

  it("capabilities-and-resources.md: inline and file Skills scoped to one Agent", async () => {
    const { calls, runtime } = setup()
    await runtime.evaluate(
      <Agent>
        <Skill>Prefer concrete evidence and small, reversible changes.</Skill>
        <Skill src="./skills/project-conventions.md" />
        Review this repository.
      </Agent>,
    )
    expect(calls[0].prompt).toBe(
      "Prefer concrete evidence and small, reversible changes.Run the linter before committing.Review this repository.",
    )
  })
})

describe("inline and file forms (SK-1)", () => {
  it("file content first, then a newline and the inline content; metadata lines are optional", async () => {
    const { calls, runtime } = setup()
    await runtime.evaluate(<Agent><Skill src="skills/editorial.md" name="style">Keep it short.</Skill></Agent>)
    await runtime.evaluate(<Agent><Skill description="Tone rules">Be kind.</Skill></Agent>)
    expect(calls.map((c) => c.prompt)).toEqual(["Skill: style\n\nUse active voice.\nKeep it short.", "Description: Tone rules\n\nBe kind."])
  })

  it("lands in <System> and <FollowUp> text of its Agent, and under lexical wrappers", async () => {
    const { calls, runtime } = setup()
    const Wrapper = ({ children }: any) => children
    await runtime.evaluate(
      <Agent>
        <System><Skill>System rule.</Skill></System>
        <Wrapper><Skill>Prompt rule.</Skill></Wrapper>
        <FollowUp><Skill>Follow rule.</Skill></FollowUp>
      </Agent>,
    )
    expect(calls[0]).toMatchObject({ followUps: ["Follow rule."], prompt: "Prompt rule.", system: "System rule." })
  })

  it("children resolve first (child Agents, writers of src), and src is read afresh each time", async () => {
    const { calls, runtime } = setup()
    const file = join(dir, "skills/generated.md")
    const Write = ({ text }: { text: string }) => (writeFileSync(file, text), "")
    await runtime.evaluate(<Agent><Skill src={file}><Write text="v1" /><Agent>child</Agent></Skill></Agent>)
    await runtime.evaluate(<Agent><Skill src={file}><Write text="v2" /></Skill>end</Agent>)
    expect(calls.map((c) => c.prompt)).toEqual(["child", "v1\nok", "v2\nend"])
  })

  it("src is a trusted application read: absolute stays absolute, `..` leaves cwd", async () => {
    const { calls, runtime } = setup({ cwd: join(dir, "skills") })
    await runtime.evaluate(<Agent><Skill src={join(dir, "skills/editorial.md")} /></Agent>)
    await runtime.evaluate(<Agent><Skill src="../skills/../skills/editorial.md" /></Agent>)
    expect(calls.map((c) => c.prompt)).toEqual(["Use active voice.", "Use active voice."])
  })
})

describe("errors (the provider never runs)", () => {
  const cases: [string, any, string][] = [
    ["no src, no children", <Agent><Skill /></Agent>, "<Skill> requires src, children, or both"],
    ["empty src", <Agent><Skill src="" /></Agent>, "<Skill> src must be a non-empty local path"],
    ["non-string src", <Agent><Skill src={5 as any} /></Agent>, "<Skill> src must be a non-empty local path"],
    ["name not normalized", <Agent><Skill name=" a">x</Skill></Agent>, "<Skill> name must be a non-empty normalized string"],
    ["empty name", <Agent><Skill name="">x</Skill></Agent>, "<Skill> name must be a non-empty normalized string"],
    ["description not a string", <Agent><Skill description={1 as any}>x</Skill></Agent>, "<Skill> description must be a non-empty normalized string"],
    ["whitespace content", <Agent><Skill name="n">{"  \n "}</Skill></Agent>, "<Skill> must resolve to non-empty text"],
    ["null children", <Agent><Skill>{null}</Skill></Agent>, "<Skill> must resolve to non-empty text"],
    ["at the root", <Skill>x</Skill>, "<Skill> is only valid inside <Agent>"],
    ["inside another Skill", <Agent><Skill><Skill>x</Skill></Skill></Agent>, "<Skill> is only valid inside <Agent>"],
    ["props before placement", <Skill />, "<Skill> requires src, children, or both"],
    ["a Parallel branch is its own subtree", <Agent><Parallel><Skill>x</Skill></Parallel></Agent>, "<Skill> is only valid inside <Agent>"],
  ]
  for (const [label, tree, message] of cases) {
    it(label, async () => {
      const { calls, runtime } = setup()
      expectError(await failureOf(() => runtime.evaluate(tree)), EvaluationError, message)
      expect(calls).toHaveLength(0)
    })
  }

  it("a nested evaluate() is not inside the surrounding Agent", async () => {
    const { calls, runtime } = setup()
    const Nested = async () => evaluate(<Skill>x</Skill>)
    expectError(await failureOf(() => runtime.evaluate(<Agent><Nested /></Agent>)), EvaluationError, "<Skill> is only valid inside <Agent>")
    expect(calls).toHaveLength(0)
  })

  it("a missing file: could not read local file, with the fs error as cause", async () => {
    const { calls, runtime } = setup()
    const error = await failureOf(() => runtime.evaluate(<Agent><Skill src="skills/missing.md" /></Agent>))
    expectError(error, EvaluationError, `<Skill> could not read local file "${join(dir, "skills/missing.md")}"`)
    expect(error.cause.code).toBe("ENOENT")
    expect(calls).toHaveLength(0)
  })

  it("invalid UTF-8 is a read failure (TypeError cause); a byte order mark is kept", async () => {
    const { calls, runtime } = setup()
    writeFileSync(join(dir, "skills/latin1.md"), Buffer.from([0x63, 0x61, 0x66, 0xe9]))
    const error = await failureOf(() => runtime.evaluate(<Agent><Skill src="skills/latin1.md" /></Agent>))
    expectError(error, EvaluationError, `<Skill> could not read local file "${join(dir, "skills/latin1.md")}"`)
    expect(error.cause).toBeInstanceOf(TypeError)
    writeFileSync(join(dir, "skills/bom.md"), "\uFEFFrule")
    await runtime.evaluate(<Agent>a<Skill src="skills/bom.md" /></Agent>)
    expect(calls.map((c) => c.prompt)).toEqual(["a\uFEFFrule"])
  })
})

describe("cancellation", () => {
  it("an abort during the read rejects with signal.reason; nothing else runs", async () => {
    const fifo = join(dir, "skills/blocking.md")
    execFileSync("mkfifo", [fifo])
    const { calls, runtime } = setup()
    const controller = new AbortController()
    const reason = new Error("stop")
    setTimeout(() => controller.abort(reason), 50)
    const error = await failureOf(() => runtime.evaluate(<Agent><Skill src="skills/blocking.md" />after</Agent>, { signal: controller.signal }))
    expect(error).toBe(reason)
    expect(calls).toHaveLength(0)
    // Release the thread still blocked opening the FIFO.
    for (let i = 0; i < 100; i++) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
        break
      } catch {
        await sleep(10)
      }
    }
  })

  it("an abort while the children resolve rejects with signal.reason", async () => {
    const { calls, runtime } = setup()
    const controller = new AbortController()
    const Abort = async () => (controller.abort("halt"), "x")
    expect(await failureOf(() => runtime.evaluate(<Agent><Skill src="skills/editorial.md"><Abort /></Skill></Agent>, { signal: controller.signal }))).toBe("halt")
    expect(calls).toHaveLength(0)
  })
})

describe("the skill span (§2.3)", () => {
  const traced = async (captureContent: boolean, tree: any) => {
    const { runtime } = setup()
    const events: any[] = []
    runtime.on("trace", Object.assign((event: any) => void events.push(event), { captureContent }))
    const error = await runtime.evaluate(tree).then(() => undefined, (e: unknown) => e)
    return { error, skills: events.filter((e) => e.kind === "skill") }
  }

  it("name, kind, trace-N identity under the Agent; metadata always, content only when captured", async () => {
    const tree = <Agent><Skill name="style" description="Rules" src="skills/editorial.md">More.</Skill>go</Agent>
    const content = "Skill: style\nDescription: Rules\n\nUse active voice.\nMore."
    const plain = await traced(false, tree)
    const full = await traced(true, tree)
    for (const { skills } of [plain, full]) {
      expect(skills.map((e) => [e.type, e.name, e.spanId, e.parentSpanId])).toEqual([
        ["span.start", "style", "trace-1", "span-1"],
        ["span.end", "style", "trace-1", "span-1"],
      ])
      expect(skills[1].status).toBe("ok")
    }
    expect({ ...plain.skills[0].attributes }).toEqual({ hasInlineContent: true, hasSource: true })
    expect({ ...plain.skills[1].attributes }).toEqual({})
    expect({ ...full.skills[0].attributes }).toEqual({ description: "Rules", hasInlineContent: true, hasSource: true, source: "skills/editorial.md" })
    expect({ ...full.skills[1].attributes }).toEqual({ content })
  })

  it('an unnamed Skill is "Skill"; a failed one ends with error status', async () => {
    const { error, skills } = await traced(true, <Agent><Skill src="skills/missing.md" /></Agent>)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(skills.map((e) => [e.type, e.name])).toEqual([["span.start", "Skill"], ["span.end", "Skill"]])
    expect(skills[1].status).toBe("error")
    expect(skills[1].attributes["error.type"]).toBe("EvaluationError")
    expect({ ...skills[0].attributes }).toEqual({ hasInlineContent: false, hasSource: true, source: "skills/missing.md" })
  })
})
