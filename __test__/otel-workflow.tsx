// The workflow the exporter specs trace: components, Parallel, structured Agent with a Tool,
// Sandbox + Script (DeterministicSandboxProvider), Loop with aml_set_state. User code in the
// component, the provider and the Tool executor creates its own OTel spans.
import type { Tracer } from "@opentelemetry/api"
import { z } from "zod"

import { Agent, AmlRuntime, Loop, Parallel, Sandbox, Script, Tool, defineTool, evaluate, type TraceSink } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

const Verdict = z.object({ verdict: z.string() })
const Counter = z.object({ count: z.number().int().min(0) })

export function tracedWorkflow(tracer: Tracer, trace: TraceSink) {
  const lookup = defineTool({
    description: "Look up a fact",
    execute: async ({ q }: { q: string }) => {
      await Promise.resolve()
      tracer.startSpan("user.tool-http").end()
      return { hit: q }
    },
    input: z.object({ q: z.string() }),
    name: "lookup",
  })
  const provider = {
    name: "otel-test",
    async run(request: any, context: any) {
      tracer.startSpan("user.provider-http").end()
      const count = Number(/count=(\d+)/.exec(request.prompt)?.[1] ?? "NaN")
      for (const tool of request.tools) {
        if (tool.name === "lookup") await tool.execute({ q: "weather" }, context)
        if (tool.name === "aml_set_state" && count < 1) await tool.execute({ updates: { count: count + 1 } }, context)
      }
      if (request.output?.type === "json") return { structured: { verdict: "fine" }, text: "" }
      return { text: `re:${request.prompt}` }
    },
  }
  const sandboxProvider = new DeterministicSandboxProvider({
    exec: () => ({ exitCode: 0, stderr: "", stdout: "hi\n" }) as any,
  })
  async function Review() {
    await Promise.resolve()
    tracer.startSpan("user.component-http").end()
    const result = await evaluate(
      <Agent model="model-1">
        <Tool use={lookup} />
        Check the weather
      </Agent>,
      Verdict,
    )
    return `verdict=${result.verdict}`
  }
  function App() {
    return (
      <Parallel>
        <Review />
        <Sandbox>
          <Script command="echo" args={["hi"]} />
        </Sandbox>
        <Loop initial={{ count: 0 }} name="counter" render={({ state }) => <Agent>count={state.count}</Agent>} schema={Counter} />
      </Parallel>
    )
  }
  const runtime = new AmlRuntime({ agentProvider: provider, sandboxProvider, trace })
  return { App, runtime }
}
