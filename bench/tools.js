// Tool and structured-output workloads: the per-call cost of a Tool called by a provider
// (sequential, concurrent, traced with content), called from a component, and called through
// the bare execute(); and the per-evaluation cost of structured evaluate().
import { z } from "zod"

import { Agent, AmlRuntime, Tool, defineTool, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

const CALLS = 2_000
const STRUCTURED = 1_000

/** The Tool of the Tool workloads (also the scaling group's). */
export const add = defineTool({
  description: "Add two numbers",
  execute: ({ a, b }) => ({ sum: a + b }),
  input: z.object({ a: z.number(), b: z.number() }),
  name: "add",
})

function callingProvider(concurrent) {
  return {
    name: "bench",
    async run(request, context) {
      const tool = request.tools[0]
      if (concurrent) {
        await Promise.all(Array.from({ length: CALLS }, (_, i) => tool.execute({ a: i, b: 1 }, context)))
      } else {
        for (let i = 0; i < CALLS; i++) await tool.execute({ a: i, b: 1 }, context)
      }
      return { text: "done" }
    },
  }
}

const grant = () => jsx(Agent, { children: [jsx(Tool, { use: add }), "add"] })

async function CallsFromComponent() {
  for (let i = 0; i < CALLS; i++) await add({ a: i, b: 1 })
  return "done"
}

function StructuredFanOut() {
  const schema = z.object({ n: z.number() })
  return Promise.all(
    Array.from({ length: STRUCTURED }, (_, i) => evaluate(jsx(Agent, { children: `task ${i}` }), schema)),
  ).then((values) => values.length)
}

export async function toolBenchmarks() {
  const sequential = new AmlRuntime({ agentProvider: callingProvider(false) })
  await measure("2,000 sequential Tool calls from a provider", { items: CALLS, run: () => sequential.evaluate(grant()) })

  const concurrent = new AmlRuntime({ agentProvider: callingProvider(true) })
  await measure("2,000 concurrent Tool calls from a provider", { items: CALLS, run: () => concurrent.evaluate(grant()) })

  const traced = new AmlRuntime({ agentProvider: callingProvider(false) })
  traced.on("trace", Object.assign(() => {}, { captureContent: true }))
  await measure("2,000 Tool calls, content-capturing trace", { items: CALLS, run: () => traced.evaluate(grant()) })

  const app = new AmlRuntime()
  await measure("2,000 callable tool(input) from a component", { items: CALLS, run: () => app.evaluate(jsx(CallsFromComponent, {})) })

  const context = { signal: new AbortController().signal, trace: { runId: "bench", spanId: "bench" } }
  await measure("2,000 bare execute() calls (no evaluation)", {
    items: CALLS,
    run: async () => {
      for (let i = 0; i < CALLS; i++) await add.execute({ a: i, b: 1 }, context)
    },
  })

  const structured = new AmlRuntime({
    agentProvider: { name: "bench", run: async () => ({ structured: { n: 1 }, text: "" }) },
    maxAgentCalls: 0,
    maxConcurrentAgents: 0,
  })
  await measure("1,000 structured evaluate() (zod schema)", {
    items: STRUCTURED,
    run: () => structured.evaluate(jsx(StructuredFanOut, {})),
  })
}
