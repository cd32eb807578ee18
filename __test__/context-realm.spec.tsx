// Context across physical SDK copies (INVENTORY RT-4, SPEC §11 "Compatible physical
// copies … share the context-definition registry"), the realm registry's guard, and the
// documented Context examples (SPEC §11, the Tool closure example, §18) run as tests.
import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

import {
  Agent,
  AmlRuntime,
  EvaluationError,
  FollowUp,
  Tool,
  createContext,
  defineTool,
  evaluate,
  useContext,
} from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { expectError, failureOf } from "./support/schemas.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const REGISTRY = Symbol.for("@aml-jsx/sdk/context-registry")

describe("cross-copy (RT-4)", () => {
  const copyDir = mkdtempSync(join(tmpdir(), "aml-sdk-context-copy-"))
  let copy: any
  let copyJsx: any
  beforeAll(async () => {
    // A second physical copy of the package: separate module instances, same realm.
    for (const entry of ["index.js", "package.json", "lib", "jsx-runtime"]) {
      cpSync(join(root, entry), join(copyDir, entry), { recursive: true })
    }
    cpSync(join(root, "native"), join(copyDir, "native"), { filter: (s) => !/\.d\.ts$/.test(s), recursive: true })
    copy = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "index.js")).href)
    copyJsx = await import(/* @vite-ignore */ pathToFileURL(join(copyDir, "jsx-runtime", "index.js")).href)
  })
  afterAll(() => rmSync(copyDir, { force: true, recursive: true }))

  it("really loads a second copy", () => {
    expect(copy.createContext).not.toBe(createContext)
    expect(copy.useContext).not.toBe(useContext)
    expect(copy.EvaluationError).not.toBe(EvaluationError)
  })

  it("a context created by the second copy works with the first copy's runtime and useContext", async () => {
    const Theme = copy.createContext("Theme")
    const Read = () => useContext(Theme as any)
    const tree = jsx(Theme.Provider, { children: <Read />, value: "from-b" })
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("from-b")
    // …and with Providers and readers mixed from both copies, shadowing still holds.
    const ReadB = () => copy.useContext(Theme)
    const mixed = copyJsx.jsx(Theme.Provider, {
      children: ["<", jsx(Theme.Provider, { children: copyJsx.jsx(ReadB, {}), value: "inner" }), ",", <Read />, ">"],
      value: "outer",
    })
    await expect(new AmlRuntime().evaluate(mixed)).resolves.toBe("<inner,outer>")
    // A default (even an explicit undefined) registered by one copy is honoured by the other.
    const Defaulted = copy.createContext("Defaulted", undefined)
    await expect(new AmlRuntime().evaluate(jsx(() => String(useContext(Defaulted as any)), {}))).resolves.toBe("undefined")
  })

  it("a context created by the first copy works with the second copy's runtime", async () => {
    const Theme = createContext<string>("Theme", "default-a")
    const ReadB = () => copy.useContext(Theme)
    const runtimeB = new copy.AmlRuntime()
    await expect(runtimeB.evaluate(copyJsx.jsx(ReadB, {}))).resolves.toBe("default-a")
    const tree = copyJsx.jsx(Theme.Provider, { children: copyJsx.jsx(ReadB, {}), value: "a" })
    await expect(runtimeB.evaluate(tree)).resolves.toBe("a")
  })

  it("the second copy keeps the documented errors", async () => {
    const Theme = copy.createContext("Theme")
    let thrown: any
    try {
      copy.useContext(Theme)
    } catch (error) {
      thrown = error
    }
    expectError(thrown, copy.EvaluationError, "useContext() is only available while an AML component is active")
    const missing = await failureOf(() => new AmlRuntime().evaluate(jsx(() => copy.useContext(Theme), {})))
    expectError(missing, EvaluationError, 'Context "Theme" has no Provider or default value')
    const notContext = await failureOf(() => new AmlRuntime().evaluate(jsx(() => copy.useContext({}), {})))
    expectError(notContext, TypeError, "useContext() requires a Context returned by createContext()")
    expect(() => copy.createContext(" ")).toThrow(TypeError)
  })
})

describe("realm registry (RT-4)", () => {
  it("lives on globalThis under the shared key, non-enumerable and non-configurable", () => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, REGISTRY)!
    expect(descriptor.enumerable).toBe(false)
    expect(descriptor.configurable).toBe(false)
    expect(descriptor.value.contexts).toBeInstanceOf(WeakMap)
    expect(descriptor.value.providers).toBeInstanceOf(WeakMap)
    const Theme = createContext("Registered")
    expect(descriptor.value.contexts.has(Theme)).toBe(true)
    expect(descriptor.value.providers.get(Theme.Provider)).toBe(Theme)
  })

  it("an invalid existing global value makes loading the SDK a TypeError", () => {
    // A fresh process: this realm already holds the valid registry.
    const script = `
      globalThis[Symbol.for("@aml-jsx/sdk/context-registry")] = { contexts: new Map(), providers: new WeakMap() }
      try {
        await import(${JSON.stringify(pathToFileURL(join(root, "index.js")).href)})
        console.log("loaded")
      } catch (error) {
        console.log(error.constructor.name + ": " + error.message)
      }`
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    expect(result.stdout.trim()).toBe("TypeError: AML Context registry has an invalid global value")
  })
})

describe("documented examples", () => {
  it("SPEC §11: SessionContext read by OrderAgent", async () => {
    interface Session {
      database: unknown
      userId: string
    }
    const SessionContext = createContext<Session>("Session")
    function OrderAgent() {
      const session = useContext(SessionContext)
      return <Agent>Review orders for user {session.userId}.</Agent>
    }
    const requestSession: Session = { database: {}, userId: "u-42" }
    const prompts: string[] = []
    const runtime = new AmlRuntime({
      agentProvider: { name: "p", async run(request) { prompts.push(request.prompt); return { text: "done" } } },
    })
    const result = await runtime.evaluate(
      <SessionContext.Provider value={requestSession}>
        <OrderAgent />
      </SessionContext.Provider>,
    )
    expect(result).toBe("done")
    expect(prompts).toEqual(["Review orders for user u-42."])
  })

  it("SPEC Tools: a session-scoped Tool captured through useContext", async () => {
    const orders = { findByUser: async (userId: string) => [{ id: "o-1", userId }] }
    const SessionContext = createContext<{ database: { orders: typeof orders }; userId: string }>("Session")
    function SupportAgent() {
      const session = useContext(SessionContext)
      const getOrders = defineTool({
        name: "get_current_user_orders",
        description: "Load orders for the current user.",
        input: z.object({}),
        execute: () => session.database.orders.findByUser(session.userId),
      })
      return (
        <Agent>
          <Tool use={getOrders} />
          Review this user's orders.
        </Agent>
      )
    }
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const output = await request.tools[0].execute({}, context)
        return { text: `${request.prompt} ${JSON.stringify(output)}` }
      },
    }
    const tree = (
      <SessionContext.Provider value={{ database: { orders }, userId: "u-7" }}>
        <SupportAgent />
      </SessionContext.Provider>
    )
    const runtime = new AmlRuntime({ agentProvider: provider, allowedTools: ["get_current_user_orders"] })
    await expect(runtime.evaluate(tree)).resolves.toBe(`Review this user's orders. [{"id":"o-1","userId":"u-7"}]`)
  })

  it("SPEC §18: the Context part of the complete example (Skill, Workspace, Sandbox left out)", async () => {
    // <Skill>, <Workspace> and <Sandbox> belong to other capabilities; the Context flow —
    // a Provider at the root, read in a component reached through structured evaluate()
    // inside Promise.all — is what this test covers.
    const Finding = z.object({ file: z.string(), problem: z.string() })
    const reviewSession = { id: "r-1", repository: { loadPatch: async () => "diff --git a/x.ts" } }
    const Session = createContext<typeof reviewSession>("ReviewSession")
    function Reviewer() {
      const session = useContext(Session)
      const loadPatch = defineTool({
        name: "load_patch",
        description: "Load the patch for this review session.",
        input: z.object({}),
        execute: () => session.repository.loadPatch(),
      })
      return (
        <Agent>
          <Tool use={loadPatch} />
          Review the patch and identify the highest-risk finding.
          <FollowUp>Challenge that finding against the surrounding implementation.</FollowUp>
          <FollowUp>Return the final finding as structured output.</FollowUp>
        </Agent>
      )
    }
    async function ReviewWorkflow() {
      const [finding, architecture] = await Promise.all([
        evaluate(<Reviewer />, Finding),
        evaluate(<Agent>Describe the architecture affected by this patch.</Agent>),
      ])
      return (
        <Agent>
          Synthesize the review. Finding: {JSON.stringify(finding)}
          Architecture: {architecture}
        </Agent>
      )
    }
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        if (request.output !== undefined) {
          const patch = await request.tools[0].execute({}, context)
          return { structured: { file: "x.ts", problem: `risk in ${patch}` }, text: "" }
        }
        return { text: request.prompt.startsWith("Describe") ? "layered" : `final(${request.prompt})` }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider, allowedTools: ["load_patch"] })
    const output = await runtime.evaluate(
      <Session.Provider value={reviewSession}>
        <ReviewWorkflow />
      </Session.Provider>,
    )
    expect(output).toBe(
      'final(Synthesize the review. Finding: {"file":"x.ts","problem":"risk in diff --git a/x.ts"}Architecture: layered)',
    )
  })
})
