// <Tool> grants and Agent-driven Tool calls (INVENTORY TL-2, TL-4, §2.3–2.5): placement,
// identity, allowlist, duplicates, the wrappers providers receive, tool spans and content
// policy. Failures and cancellation are in tool-failures.spec.tsx.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import {
  Agent,
  AmlRuntime,
  EvaluationError,
  FollowUp,
  System,
  Tool,
  ToolInputError,
  defineTool,
} from "@aml-jsx/sdk"

import { customSchema, anything, expectError, failureOf } from "./support/schemas.js"

const lookup = defineTool({
  description: "Read one order",
  execute: async ({ id }: { id: string }) => ({ id, status: "paid" }),
  input: z.object({ id: z.string() }),
  name: "lookup_order",
})

/** A provider that calls every granted Tool with `input` and reports the results as text. */
function callingProvider(input: unknown = { id: "A-42" }) {
  const requests: any[] = []
  return {
    requests,
    provider: {
      name: "p",
      async run(request: any, context: any) {
        requests.push(request)
        const results = []
        for (const tool of request.tools) results.push(await tool.execute(input, context))
        return { text: JSON.stringify(results) }
      },
    },
  }
}

function traceSink(captureContent: boolean) {
  const events: any[] = []
  const sink = Object.assign((event: any) => void events.push(event), { captureContent })
  return { events, sink }
}

describe("granting (TL-2)", () => {
  it("gives the provider an instrumented wrapper and runs the Tool", async () => {
    const { provider, requests } = callingProvider()
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        <Tool use={lookup} />
        Summarize order A-42.
      </Agent>,
    )
    expect(text).toBe('[{"id":"A-42","status":"paid"}]')
    const [wrapper] = requests[0].tools
    expect(wrapper).not.toBe(lookup)
    expect(Object.isFrozen(wrapper) && Object.isFrozen(requests[0].tools)).toBe(true)
    expect(Object.keys(wrapper).sort()).toEqual(["description", "execute", "inputSchema", "kind", "name"])
    expect(wrapper).toMatchObject({ description: "Read one order", kind: "javascript", name: "lookup_order" })
    expect(wrapper.inputSchema).toBe(lookup.inputSchema)
    expect(requests[0].prompt).toBe("Summarize order A-42.")
  })

  const placement = async (tree: unknown, message: string, options: object = {}) => {
    const { provider } = callingProvider()
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider, ...options }).evaluate(tree as never))
    expectError(error, EvaluationError, message)
  }

  it("rejects children, a missing use and a name prop", async () => {
    await placement(<Agent><Tool use={lookup}>{"child" as never}</Tool></Agent>, "<Tool> does not accept children")
    await placement(<Agent><Tool {...({} as any)} /></Agent>, "<Tool> requires exactly one JavaScript Tool through use")
    await placement(<Agent><Tool {...({ name: "lookup_order", use: lookup } as any)} /></Agent>, "<Tool> requires exactly one JavaScript Tool through use")
  })

  it.each([
    ["a structural copy", () => ({ ...lookup, __amlTool: true })],
    ["a derived object", () => Object.create(lookup)],
    ["a proxy", () => new Proxy(lookup, {})],
    ["a bound copy", () => lookup.bind(null)],
    ["a string", () => "lookup_order"],
  ])("accepts only the exact registered identity, not %s", async (_, make) => {
    await placement(<Agent><Tool use={make() as never} /></Agent>, "<Tool use> must be a JavaScript Tool")
  })

  it("refuses to send a JSON Schema that fails the draft 2020-12 meta-schema", async () => {
    const odd = defineTool({ description: "d", execute: () => null, input: customSchema(anything["~standard"].validate, () => ({ type: 12 })), name: "odd" })
    await placement(<Agent><Tool use={odd} /></Agent>, '<Tool use> "odd" has an invalid input JSON Schema')
  })

  it("rejects duplicate names in one Agent", async () => {
    const twin = defineTool({ description: "Other", execute: () => null, input: z.object({}), name: "lookup_order" })
    await placement(<Agent><Tool use={lookup} /><Tool use={twin} /></Agent>, 'Agent declares duplicate Tool "lookup_order"')
    await placement(<Agent><Tool use={lookup} /><Tool use={lookup} /></Agent>, 'Agent declares duplicate Tool "lookup_order"')
  })

  it("enforces the runtime allowlist", async () => {
    await placement(<Agent><Tool use={lookup} /></Agent>, 'Tool "lookup_order" is not allowed by this runtime', { allowedTools: ["other"] })
    await placement(<Agent><Tool use={lookup} /></Agent>, 'Tool "lookup_order" is not allowed by this runtime', { allowedTools: [] })
    const { provider } = callingProvider()
    const runtime = new AmlRuntime({ agentProvider: provider, allowedTools: ["lookup_order"] })
    await expect(runtime.evaluate(<Agent><Tool use={lookup} />go</Agent>)).resolves.toContain("paid")
  })

  it("rejects placement outside an Agent, inside FollowUp and inside System", async () => {
    await placement(<Tool use={lookup} />, "<Tool> is only valid inside <Agent>")
    await placement(<Agent>x<FollowUp>more<Tool use={lookup} /></FollowUp></Agent>, "<Tool> is invalid inside <FollowUp>")
    await placement(<Agent>x<System>rules<Tool use={lookup} /></System></Agent>, "<Tool> is only valid inside <Agent>")
  })

  it("grants only to the nearest Agent", async () => {
    const seen: Record<string, string[]> = {}
    const provider = {
      name: "p",
      async run(request: any) {
        seen[request.prompt] = request.tools.map((tool: any) => tool.name)
        return { text: "" }
      },
    }
    const other = defineTool({ description: "Other", execute: () => null, input: z.object({}), name: "other" })
    await new AmlRuntime({ agentProvider: provider }).evaluate(
      <>
        <Agent>
          outer
          <Tool use={lookup} />
          <Agent>inner<Tool use={other} /></Agent>
        </Agent>
        <Agent>sibling</Agent>
      </>,
    )
    expect(seen).toEqual({ inner: ["other"], outer: ["lookup_order"], sibling: [] })
  })
})

describe("tool spans and content policy (§2.3–2.5)", () => {
  async function traced(tool: any, input: unknown) {
    const plain = traceSink(false)
    const content = traceSink(true)
    const runtime = new AmlRuntime({ agentProvider: callingProvider(input).provider })
    runtime.on("trace", plain.sink)
    runtime.on("trace", content.sink)
    const outcome = await runtime.evaluate(<Agent><Tool use={tool} />go</Agent>).catch((error) => error)
    return { content: content.events, outcome, plain: plain.events }
  }

  it("opens a tool span under the Agent span and announces the capability first", async () => {
    const { content, plain } = await traced(lookup, { id: "A-1" })
    const names = plain.map((e) => `${e.type}:${e.name}`)
    expect(names.indexOf("event:capability.tool")).toBeLessThan(names.indexOf("span.start:lookup_order"))
    const capability = plain.find((e) => e.name === "capability.tool")
    expect(capability.spanId).toBe("span-1")
    expect(capability.attributes).toEqual({ kind: "javascript", name: "lookup_order" })
    const start = plain.find((e) => e.type === "span.start" && e.kind === "tool")
    const end = plain.find((e) => e.type === "span.end" && e.kind === "tool")
    expect(start).toMatchObject({ kind: "tool", name: "lookup_order", parentSpanId: "span-1" })
    expect(start.spanId).toMatch(/^trace-\d+$/)
    expect(end).toMatchObject({ spanId: start.spanId, status: "ok" })
    // Metadata-only listeners never see the JSON; content listeners do.
    expect(start.attributes).toEqual({})
    expect(end.attributes).toEqual({})
    const contentStart = content.find((e) => e.type === "span.start" && e.kind === "tool")
    const contentEnd = content.find((e) => e.type === "span.end" && e.kind === "tool")
    expect(contentStart.attributes).toEqual({ input: '{"id":"A-1"}' })
    expect(contentEnd.attributes).toEqual({ output: '{"id":"A-1","status":"paid"}' })
  })

  it("still opens a span, failed with ToolInputError, when the transport snapshot fails", async () => {
    const { outcome, plain, content } = await traced(lookup, { id: 1n })
    expectError(outcome, EvaluationError, 'Agent "p" (span-1) failed')
    expectError(outcome.cause, ToolInputError, 'Tool "lookup_order" input is not valid JSON')
    const end = plain.find((e) => e.type === "span.end" && e.kind === "tool")
    expect(end).toMatchObject({ status: "error", attributes: { "error.type": "ToolInputError" } })
    expect(content.find((e) => e.type === "span.start" && e.kind === "tool").attributes).toEqual({})
  })

  it("gives the executor the tool span's identity and the evaluation's signal", async () => {
    const contexts: any[] = []
    const probe = defineTool({ description: "d", execute: (_: unknown, context: any) => (contexts.push(context), null), input: z.object({}), name: "probe" })
    const { plain } = await traced(probe, {})
    const start = plain.find((e) => e.type === "span.start" && e.kind === "tool")
    expect(contexts[0].trace).toEqual({ parentSpanId: "span-1", runId: start.runId, spanId: start.spanId })
    expect(contexts[0].signal).toBeInstanceOf(AbortSignal)
    expect(Object.isFrozen(contexts[0])).toBe(true)
  })

  it("omits content that cannot be serialised instead of failing", async () => {
    let deep: unknown = 0
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const tool = defineTool({ description: "d", execute: () => deep as never, input: z.object({}), name: "deep" })
    const { content } = await traced(tool, {})
    const end = content.find((e) => e.type === "span.end" && e.kind === "tool")
    expect(end.status).toBe("ok")
    expect(end.attributes.output).toBeUndefined()
  })
})
