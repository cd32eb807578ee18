// What the journal records and replays besides plain Agents (docs/JOURNAL.md): callable
// Tools from components, structured evaluate(), the Tools a provider called, and what it
// deliberately re-runs (Scripts).
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Script, Tool, createMemoryJournal, defineTool, evaluate } from "@aml-jsx/sdk"

import { traceRecorder } from "./support/async.js"

const root = mkdtempSync(join(tmpdir(), "aml-journal-steps-"))
afterAll(() => rmSync(root, { force: true, recursive: true }))

function lookup() {
  const executed: string[] = []
  const tool = defineTool({
    description: "Look up a price",
    execute: async ({ sku }: { sku: string }) => {
      executed.push(sku)
      return { price: sku.length * 10 }
    },
    input: z.object({ sku: z.string() }),
    name: "lookup",
    output: z.object({ price: z.number() }),
  })
  return { executed, tool }
}

describe("callable Tools from components", () => {
  it("frames the Tool call digest's parts by their UTF-8 byte length", async () => {
    const { tool } = lookup()
    let schema = ""
    const provider = {
      name: "p",
      async run(request: any) {
        schema = JSON.stringify(request.tools[0].inputSchema)
        return { text: "ok" }
      },
    }
    async function Price() {
      await tool({ sku: "crème brûlée" })
      return ""
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    await runtime.evaluate(<Agent>x<Tool use={tool} /></Agent>)
    const journal = createMemoryJournal()
    await runtime.evaluate(<Price />, { journal })
    const part = (text: string) => `${Buffer.byteLength(text)}:${text};`
    const canonical = `tool;${part("lookup")}${part(schema)}${part(JSON.stringify({ sku: "crème brûlée" }))}`
    expect(journal.entries()[0]!.digest).toBe(createHash("sha256").update(canonical).digest("hex"))
  })

  it("replays settled calls without running the executor, keeping the tool span", async () => {
    const { executed, tool } = lookup()
    const outputs: unknown[] = []
    async function Prices() {
      const a = await tool({ sku: "ab" })
      const b = await tool({ sku: "abc" })
      outputs.push(a, b)
      return `${a.price}+${b.price}`
    }
    const runtime = new AmlRuntime()
    const journal = createMemoryJournal()
    await expect(runtime.evaluate(<Prices />, { journal })).resolves.toBe("20+30")
    expect(executed).toEqual(["ab", "abc"])
    expect(journal.entries().map((e) => e.kind)).toEqual(["tool", "tool"])

    const { events, sink } = traceRecorder()
    runtime.on("trace", sink)
    await expect(runtime.evaluate(<Prices />, { journal })).resolves.toBe("20+30")
    expect(executed).toEqual(["ab", "abc"])
    expect(Object.isFrozen(outputs[2])).toBe(true)
    expect(outputs[2]).toEqual({ price: 20 })
    const ends = events.filter((e) => e.type === "span.end" && e.kind === "tool")
    expect(ends.map((e) => [e.name, e.attributes["journal.replayed"]])).toEqual([
      ["lookup", true],
      ["lookup", true],
    ])
    const component = events.find((e) => e.type === "span.start" && e.kind === "component")
    expect(ends.every((e) => e.parentSpanId === component.spanId)).toBe(true)
    expect(events.filter((e) => e.name === "journal.replay").map((e) => e.attributes.kind)).toEqual(["tool", "tool"])
  })

  it("re-runs a call whose input changed and reports the divergence", async () => {
    const { executed, tool } = lookup()
    let sku = "ab"
    async function Price() {
      const { price } = await tool({ sku })
      return String(price)
    }
    const runtime = new AmlRuntime()
    const journal = createMemoryJournal()
    await runtime.evaluate(<Price />, { journal })
    sku = "abcd"
    const { events, sink } = traceRecorder()
    runtime.on("trace", sink)
    await expect(runtime.evaluate(<Price />, { journal })).resolves.toBe("40")
    expect(executed).toEqual(["ab", "abcd"])
    expect(events.filter((e) => e.name === "journal.divergence").map((e) => e.attributes.kind)).toEqual(["tool"])
  })
})

describe("Agents inside components", () => {
  it("replays structured evaluate() with the schema's validated value", async () => {
    const prompts: string[] = []
    const provider = {
      name: "p",
      async run(request: any) {
        prompts.push(request.prompt)
        return { structured: { total: 42 }, text: "" }
      },
    }
    const schema = z.object({ total: z.number() })
    async function Total() {
      const value = await evaluate(<Agent>sum it</Agent>, schema)
      return `total=${value.total}`
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await expect(runtime.evaluate(<Total />, { journal })).resolves.toBe("total=42")
    await expect(runtime.evaluate(<Total />, { journal })).resolves.toBe("total=42")
    expect(prompts).toEqual(["sum it"])
    expect(journal.entries()[0].value).toEqual({ structured: { total: 42 } })
  })

  it("does not run the Tools a provider called when its Agent is replayed", async () => {
    const { executed, tool } = lookup()
    const provider = {
      name: "p",
      async run(request: any) {
        const out = await request.tools[0].execute({ sku: "xyz" })
        return { text: `price ${out.price}` }
      },
    }
    const tree = (
      <Agent>
        quote<Tool use={tool} />
      </Agent>
    )
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await runtime.evaluate(tree, { journal })
    await expect(runtime.evaluate(tree, { journal })).resolves.toBe("price 30")
    expect(executed).toEqual(["xyz"])
  })

  it("keys concurrent nested evaluate() calls by their order in the component", async () => {
    const calls: string[] = []
    let fail = true
    const provider = {
      name: "p",
      async run(request: any) {
        calls.push(request.prompt)
        if (request.prompt === "same" && fail && calls.filter((c) => c === "same").length === 2) {
          fail = false
          throw new Error("outage")
        }
        return { text: `<${request.prompt}>` }
      },
    }
    // Three identical requests: the journal still tells them apart by position.
    async function Fan() {
      const parts = await Promise.all([1, 2, 3].map(() => evaluate(<Agent>same</Agent>)))
      return parts.join("")
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const journal = createMemoryJournal()
    await expect(runtime.evaluate(<Fan />, { journal })).rejects.toThrow()
    expect(new Set(journal.entries().map((e) => e.key)).size).toBe(2)
    calls.length = 0
    await expect(runtime.evaluate(<Fan />, { journal })).resolves.toBe("<same><same><same>")
    expect(calls).toEqual(["same"])
  })
})

describe("what re-runs", () => {
  it("runs a Script again on every evaluation (its effects are not journaled)", async () => {
    const file = join(root, "script.log")
    const tree = <Script shell="sh">{`echo ran >> '${file}'; echo done`}</Script>
    const runtime = new AmlRuntime()
    const journal = createMemoryJournal()
    await runtime.evaluate(tree, { journal })
    await runtime.evaluate(tree, { journal })
    expect(readFileSync(file, "utf8")).toBe("ran\nran\n")
    expect(journal.entries()).toEqual([])
  })
})
