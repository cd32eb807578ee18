// Content in traces follows consent (docs/OBSERVABILITY.md "Content"): the engine records
// prompts and outputs only while some trace listener captures content, and starts doing so
// the moment one joins. Listeners that do not consent never see content either way.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"

type TraceEvent = { type: string; kind?: string; attributes: Record<string, unknown> }

/** A provider that subscribes a content-capturing listener to its own evaluation during run(). */
function joiningProvider(seen: TraceEvent[]) {
  const joined = new Set<unknown>()
  return {
    name: "joining",
    async run(request: { prompt: string }, context: any) {
      // Once per evaluation: Agents of one evaluation share its event scope.
      if (!joined.has(context.events)) {
        joined.add(context.events)
        const listener = (event: TraceEvent) => {
          seen.push(event)
        }
        ;(listener as any).captureContent = true
        context.events.on("trace", listener)
      }
      return { text: `[${request.prompt}]` }
    },
  }
}

const agentEnds = (events: TraceEvent[]) => events.filter((event) => event.type === "span.end" && event.kind === "agent")

describe("trace content and consent", () => {
  it("records an Agent's content once a consenting listener joins during the run", async () => {
    const consenting: TraceEvent[] = []
    const plain: TraceEvent[] = []
    const runtime = new AmlRuntime({ agentProvider: joiningProvider(consenting), trace: (event: any) => plain.push(event) })
    await expect(runtime.evaluate(<Agent>hello</Agent>)).resolves.toBe("[hello]")
    const [end] = agentEnds(consenting)
    expect(end.attributes.prompt).toBe("hello")
    expect(end.attributes.output).toBe("[hello]")
    const [redacted] = agentEnds(plain)
    expect(redacted.attributes.provider).toBe("joining")
    expect(redacted.attributes.prompt).toBeUndefined()
    expect(redacted.attributes.output).toBeUndefined()
  })

  it("does the same for Agents fanned out with evaluate() from a component", async () => {
    const consenting: TraceEvent[] = []
    const runtime = new AmlRuntime({ agentProvider: joiningProvider(consenting), trace: () => {} })
    function FanOut() {
      return Promise.all(["a", "b"].map((prompt) => evaluate(<Agent>{prompt}</Agent>))).then((texts) => texts.join(" "))
    }
    await expect(runtime.evaluate(<FanOut />)).resolves.toBe("[a] [b]")
    const outputs = agentEnds(consenting).map((event) => event.attributes.output)
    expect(outputs.sort()).toEqual(["[a]", "[b]"])
  })

  it("gives a consenting runtime listener content and a plain one none, in the same run", async () => {
    const consenting: TraceEvent[] = []
    const plain: TraceEvent[] = []
    const capture = (event: any) => consenting.push(event)
    capture.captureContent = true
    const runtime = new AmlRuntime({
      agentProvider: { name: "echo", run: async (request: { prompt: string }) => ({ text: request.prompt.toUpperCase() }) },
    })
    runtime.on("trace", capture)
    runtime.on("trace", (event: any) => plain.push(event))
    await expect(runtime.evaluate(<Agent>quiet</Agent>)).resolves.toBe("QUIET")
    expect(agentEnds(consenting)[0].attributes.output).toBe("QUIET")
    expect(agentEnds(plain)[0].attributes.output).toBeUndefined()
  })
})
