// Callable Tools (docs-next "Tool validation boundaries") and the cross-copy Tool registry
// (RT-4). `tool(input)` works only while an AML component is active, goes through the same
// validation as Agent calls, and is traced as a `tool` span under the calling component.
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, Tool, ToolInputError, defineTool, evaluate } from "@aml-jsx/sdk"

import { expectError, failureOf } from "./support/schemas.js"

const ONLY_ACTIVE = "Tools can only be called while an AML component is active"

function counter() {
  const calls: unknown[] = []
  const tool = defineTool({
    description: "Double a number",
    execute: ({ n }: { n: number }) => {
      calls.push(n)
      return { doubled: n * 2 }
    },
    input: z.object({ n: z.number() }),
    name: "double",
  })
  return { calls, tool }
}

describe("outside an active component", () => {
  it("throws EvaluationError synchronously", () => {
    const { calls, tool } = counter()
    let thrown: any
    try {
      void tool({ n: 1 })
    } catch (error) {
      thrown = error
    }
    expectError(thrown, EvaluationError, ONLY_ACTIVE)
    expect(calls).toEqual([])
  })

  it("throws after the component settled (retained closure)", async () => {
    const { tool } = counter()
    let later: (() => unknown) | undefined
    function Keep() {
      later = () => tool({ n: 1 })
      return "kept"
    }
    await new AmlRuntime().evaluate(<Keep />)
    expectError(await failureOf(() => later!()), EvaluationError, ONLY_ACTIVE)
  })

  it("throws inside a provider's run() and inside an executor, which are masked", async () => {
    const { tool } = counter()
    const fromProvider = await new AmlRuntime({
      agentProvider: { name: "p", run: async () => ({ text: String((await failureOf(() => tool({ n: 1 }))).message) }) },
    }).evaluate(<Agent>go</Agent>)
    expect(fromProvider).toBe(ONLY_ACTIVE)
    const outer = defineTool({
      description: "Calls another Tool",
      execute: async () => ({ message: (await failureOf(() => tool({ n: 1 }))).message }),
      input: z.object({}),
      name: "outer",
    })
    async function App() {
      return JSON.stringify(await outer({}))
    }
    await expect(new AmlRuntime().evaluate(<App />)).resolves.toBe(JSON.stringify({ message: ONLY_ACTIVE }))
  })
})

describe("inside an active component", () => {
  it("runs the Tool and resolves with its frozen JSON output", async () => {
    const { calls, tool } = counter()
    async function App() {
      const pending = tool({ n: 21 })
      expect(pending).toBeInstanceOf(Promise)
      const result = await pending
      expect(Object.isFrozen(result)).toBe(true)
      return `answer=${result.doubled}`
    }
    await expect(new AmlRuntime().evaluate(<App />)).resolves.toBe("answer=42")
    expect(calls).toEqual([21])
  })

  it("validates input the same way: ToolInputError and no execution", async () => {
    const { calls, tool } = counter()
    async function App() {
      const error = await failureOf(() => tool({ n: "21" } as never))
      expectError(error, ToolInputError, 'Tool "double" input failed schema validation')
      const decoded = await tool('{"n":2}' as never)
      return String(decoded.doubled)
    }
    await expect(new AmlRuntime().evaluate(<App />)).resolves.toBe("4")
    expect(calls).toEqual([2])
  })

  it("is traced as a tool span under the component, with content only for content listeners", async () => {
    const { tool } = counter()
    const plain: any[] = []
    const content: any[] = []
    const runtime = new AmlRuntime()
    runtime.on("trace", (event) => void plain.push(event))
    runtime.on("trace", Object.assign((event: any) => void content.push(event), { captureContent: true }))
    async function App() {
      return String((await tool({ n: 5 })).doubled)
    }
    await runtime.evaluate(<App />)
    const component = plain.find((e) => e.type === "span.start" && e.kind === "component")
    const start = plain.find((e) => e.type === "span.start" && e.kind === "tool")
    expect(start).toMatchObject({ name: "double", parentSpanId: component.spanId, attributes: {} })
    expect(plain.find((e) => e.type === "span.end" && e.kind === "tool")).toMatchObject({ status: "ok", attributes: {} })
    expect(content.find((e) => e.type === "span.start" && e.kind === "tool").attributes).toEqual({ input: '{"n":5}' })
    expect(content.find((e) => e.type === "span.end" && e.kind === "tool").attributes).toEqual({ output: '{"doubled":10}' })
  })

  it("is joined like nested work when the component does not await it", async () => {
    const done: string[] = []
    const slow = defineTool({
      description: "Slow",
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 10))
        done.push("tool")
        return null
      },
      input: z.object({}),
      name: "slow",
    })
    function Fire() {
      void slow({})
      return "fired"
    }
    await expect(new AmlRuntime().evaluate(<Fire />)).resolves.toBe("fired")
    expect(done).toEqual(["tool"])
  })

  it("fails the component when an unawaited call fails", async () => {
    const { tool } = counter()
    function Fire() {
      void tool({ n: "bad" } as never)
      return "fired"
    }
    expectError(await failureOf(() => new AmlRuntime().evaluate(<Fire />)), ToolInputError, 'Tool "double" input failed schema validation')
  })

  it("rejects with the abort reason when the evaluation is cancelled", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    const hang = defineTool({ description: "d", execute: () => new Promise<never>(() => {}), input: z.object({}), name: "hang" })
    let call: Promise<unknown> | undefined
    async function App() {
      call = hang({})
      setTimeout(() => controller.abort(reason), 5)
      return String(await call)
    }
    expect(await failureOf(() => new AmlRuntime().evaluate(<App />, { signal: controller.signal }))).toBe(reason)
    expect(await failureOf(() => call)).toBe(reason)
  })

  it("works from a nested evaluate()", async () => {
    const { tool } = counter()
    async function Inner() {
      return String((await tool({ n: 3 })).doubled)
    }
    async function Outer() {
      return `[${await evaluate(<Inner />)}]`
    }
    await expect(new AmlRuntime().evaluate(<Outer />)).resolves.toBe("[6]")
  })
})

describe("across physical SDK copies (RT-4)", () => {
  const root = fileURLToPath(new URL("..", import.meta.url))
  const copyDir = mkdtempSync(join(tmpdir(), "aml-sdk-tool-copy-"))
  afterAll(() => rmSync(copyDir, { force: true, recursive: true }))

  async function loadCopy() {
    for (const entry of ["index.js", "package.json", "lib", "jsx-runtime"]) {
      cpSync(join(root, entry), join(copyDir, entry), { recursive: true })
    }
    cpSync(join(root, "native"), join(copyDir, "native"), { filter: (source) => !/\.d\.ts$/.test(source), recursive: true })
    return import(/* @vite-ignore */ pathToFileURL(join(copyDir, "index.js")).href)
  }

  it("accepts a Tool from another copy in <Tool use> and as a callable", async () => {
    const copy = await loadCopy()
    expect(copy.defineTool).not.toBe(defineTool)
    const foreign = copy.defineTool({
      description: "Greets",
      execute: ({ who }: { who: string }) => ({ greeting: `hi ${who}` }),
      input: z.object({ who: z.string() }),
      name: "greet",
    })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        return { text: JSON.stringify(await request.tools[0].execute({ who: "agent" }, context)) }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate(<Agent><Tool use={foreign} />go</Agent>)).resolves.toBe('{"greeting":"hi agent"}')
    async function App() {
      return (await foreign({ who: "app" })).greeting
    }
    await expect(runtime.evaluate(<App />)).resolves.toBe("hi app")
    const error = await failureOf(() => runtime.evaluate(<Agent><Tool use={{ ...foreign }} />go</Agent>))
    expectError(error, EvaluationError, "<Tool use> must be a JavaScript Tool")
  })
})
