// A plain Tool call's span crosses the boundary through the narrow openToolSpan /
// closeToolSpan calls (src/hot_path/tool_span.rs) unless a listener captures content; these
// tests pin that both ways give the same span records, ids and results.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Tool, defineTool, evaluate } from "@aml-jsx/sdk"

const add = defineTool({
  description: "Add two numbers",
  execute: ({ a, b }: { a: number; b: number }) => ({ sum: a + b }),
  input: z.object({ a: z.number(), b: z.number() }),
  name: "add",
})

function sink(captureContent: boolean) {
  const events: any[] = []
  const listener = Object.assign((event: any) => void events.push(event), { captureContent })
  return { events, listener }
}

/** An Agent whose provider calls `add` twice and answers with the sums. */
async function run(listeners: Array<ReturnType<typeof sink>>) {
  const contexts: any[] = []
  const runtime = new AmlRuntime({
    agentProvider: {
      name: "p",
      async run(request: any, context: any) {
        const tool = request.tools[0]
        const first = await tool.execute({ a: 1, b: 2 }, context)
        const second = await tool.execute({ a: 3, b: 4 }, context)
        contexts.push(context)
        return { text: `${first.sum},${second.sum}` }
      },
    },
  })
  for (const { listener } of listeners) runtime.on("trace", listener)
  const text = await runtime.evaluate(<Agent><Tool use={add} />go</Agent>)
  return { contexts, text }
}

const toolSpans = (events: any[]) =>
  events.filter((e) => e.kind === "tool").map((e) => [e.type, e.spanId, e.parentSpanId, e.name, e.status, e.attributes])

describe("the plain Tool span path", () => {
  it("gives a metadata-only listener the same tool spans as when content is captured", async () => {
    const plain = sink(false)
    await expect(run([plain])).resolves.toMatchObject({ text: "3,7" })
    const both = [sink(false), sink(true)]
    await expect(run(both)).resolves.toMatchObject({ text: "3,7" })
    const spans = toolSpans(plain.events)
    expect(spans).toHaveLength(4)
    expect(spans.map(([type]) => type)).toEqual(["span.start", "span.end", "span.start", "span.end"])
    expect(spans[0][1]).toMatch(/^trace-\d+$/)
    expect(spans[1]).toEqual(["span.end", spans[0][1], "span-1", "add", "ok", {}])
    expect(spans[2][1]).not.toBe(spans[0][1])
    // The metadata listener of the content-capturing run sees exactly the same records.
    expect(toolSpans(both[0].events)).toEqual(spans)
    const content = toolSpans(both[1].events)
    expect(content.map(([type, id, parent, name, status]) => [type, id, parent, name, status])).toEqual(
      spans.map(([type, id, parent, name, status]) => [type, id, parent, name, status]),
    )
    expect(content[0][5]).toEqual({ input: '{"a":1,"b":2}' })
    expect(content[1][5]).toEqual({ output: '{"sum":3}' })
  })

  it("numbers spans the same untraced and traced, so later span ids do not shift", async () => {
    const seen: string[] = []
    const probe = defineTool({
      description: "Report the span",
      execute: (_input: unknown, context: any) => (seen.push(context.trace.spanId), null),
      input: z.object({}),
      name: "probe",
    })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        await request.tools[0].execute({}, context)
        await request.tools[0].execute({}, context)
        return { text: "ok" }
      },
    }
    const untraced = new AmlRuntime({ agentProvider: provider })
    await untraced.evaluate(<Agent><Tool use={probe} />go</Agent>)
    const traced = new AmlRuntime({ agentProvider: provider })
    const plain = sink(false)
    traced.on("trace", plain.listener)
    await traced.evaluate(<Agent><Tool use={probe} />go</Agent>)
    expect(seen.slice(0, 2)).toEqual(seen.slice(2))
    expect(toolSpans(plain.events).filter(([type]) => type === "span.start").map(([, id]) => id)).toEqual(seen.slice(2))
  })

  it("puts a callable Tool's span under the calling component's span", async () => {
    const plain = sink(false)
    const runtime = new AmlRuntime()
    runtime.on("trace", plain.listener)
    async function Caller() {
      const { sum } = await add({ a: 2, b: 5 })
      return `sum ${sum} ${await evaluate("done")}`
    }
    await expect(runtime.evaluate(<Caller />)).resolves.toBe("sum 7 done")
    const component = plain.events.find((e) => e.type === "span.start" && e.kind === "component")
    const spans = toolSpans(plain.events)
    expect(spans).toEqual([
      ["span.start", spans[0][1], component.spanId, "add", undefined, {}],
      ["span.end", spans[0][1], component.spanId, "add", "ok", {}],
    ])
  })
})
