// Token usage (issue 37): AgentResponse.usage from any provider lands on the Agent span, rolls
// up the span tree to the evaluation, reaches `finish` and the OpenTelemetry exporter, and
// `maxTokens` stops an evaluation that reaches it.
import { describe, expect, it, test } from "vitest"

import {
  Agent,
  AmlRuntime,
  evaluate,
  FollowUp,
  createMemoryJournal,
  createOpenTelemetryTracer,
  defineAgentProvider,
  describeFailure,
  normalizeUsage,
  Parallel,
  Sandbox,
  Workspace,
} from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider, DeterministicWorkspaceProvider } from "@aml-jsx/sdk/testing"

import { scriptedAcp } from "./support/acp.js"
import { expectEvaluationError, expectTypeError } from "./support/agent.js"
import { memoryTracing } from "./support/otel.js"

type Usage = Record<string, number>

/** A plain `{ name, run }` provider answering `[prompt]` with the usage `usageOf(prompt)`. */
function reporting(usageOf: (prompt: string) => unknown) {
  const prompts: string[] = []
  const provider = {
    name: "metered",
    async run(request: any) {
      prompts.push(request.prompt)
      return { text: `[${request.prompt}]`, usage: usageOf(request.prompt) }
    },
  }
  return { prompts, provider }
}

/** Every trace event of `runtime`'s evaluations, and the `finish` events. */
function observe(runtime: AmlRuntime) {
  const events: any[] = []
  const finishes: any[] = []
  runtime.on("trace", (event) => void events.push(event))
  runtime.on("finish", (event) => void finishes.push(event))
  const ends = (name: string) => events.filter((e) => e.type === "span.end" && e.name === name)
  return { ends, events, finishes }
}

const Pair = () => [<Agent>a</Agent>, <Agent>b</Agent>]

describe("reporting", () => {
  const cases: [string, (usageOf: (prompt: string) => unknown) => any][] = [
    ["a plain { name, run } provider", (usageOf) => reporting(usageOf).provider],
    [
      "defineAgentProvider",
      (usageOf) => defineAgentProvider({ name: "defined", run: async (request: any) => ({ text: `[${request.prompt}]`, usage: usageOf(request.prompt) }) }),
    ],
    [
      "DeterministicAgentProvider",
      (usageOf) => new DeterministicAgentProvider({ respond: (request: any) => ({ text: `[${request.prompt}]`, usage: usageOf(request.prompt) }) }),
    ],
  ]
  for (const [label, make] of cases) {
    it(`${label}: on the Agent span, rolled up per subtree and evaluation, in finish`, async () => {
      const usage: Record<string, Usage> = { a: { inputTokens: 10, outputTokens: 2 }, b: { inputTokens: 5, outputTokens: 1, totalTokens: 8, cachedInputTokens: 3 } }
      const runtime = new AmlRuntime({ agentProvider: make((prompt) => usage[prompt]) })
      const { ends, finishes } = observe(runtime)
      expect(await runtime.evaluate(<Pair />)).toBe("[a][b]")
      expect(ends("Agent").map((e) => e.attributes.usage)).toEqual([usage.a, usage.b])
      expect(Object.isFrozen(ends("Agent")[0].attributes.usage)).toBe(true)
      // The subtree's total (the component's span) and the evaluation's: totalTokens counts a
      // part without a total as its input + output (12 + 8).
      const total = { cachedInputTokens: 3, inputTokens: 15, outputTokens: 3, totalTokens: 20 }
      expect(ends("Pair")[0].attributes.usage).toEqual(total)
      expect(ends("evaluate")[0].attributes.usage).toEqual(total)
      expect(finishes[0].usage).toEqual(total)
      expect(Object.isFrozen(finishes[0])).toBe(true)
    })
  }

  test("without usage nothing changes: no usage attribute anywhere, no finish.usage", async () => {
    const runtime = new AmlRuntime({ agentProvider: reporting(() => undefined).provider })
    const { events, finishes } = observe(runtime)
    await runtime.evaluate(<Pair />)
    expect(events.filter((e) => e.attributes !== undefined && "usage" in e.attributes)).toEqual([])
    expect(Object.keys(finishes[0]).sort()).toEqual(["runId", "signal", "status"])
    // null is "not reported" too.
    const nulls = new AmlRuntime({ agentProvider: reporting(() => null).provider })
    const seen = observe(nulls)
    await nulls.evaluate(<Agent>x</Agent>)
    expect("usage" in seen.finishes[0]).toBe(false)
  })

  test("a failed evaluation's finish still carries the usage reported before the failure", async () => {
    const runtime = new AmlRuntime({ agentProvider: reporting(() => ({ totalTokens: 7 })).provider })
    const { finishes } = observe(runtime)
    const Boom = () => {
      throw new Error("boom")
    }
    await expect(runtime.evaluate([<Agent>a</Agent>, <Boom />])).rejects.toThrow("boom")
    expect(finishes[0]).toMatchObject({ status: "error", usage: { totalTokens: 7 } })
  })

  const bad: [unknown, string][] = [
    [{ inputTokens: -1 }, "Agent span-1 usage.inputTokens must be a non-negative safe integer"],
    [{ outputTokens: 1.5 }, "Agent span-1 usage.outputTokens must be a non-negative safe integer"],
    [{ totalTokens: "12" }, "Agent span-1 usage.totalTokens must be a non-negative safe integer"],
    [{ cachedInputTokens: Number.NaN }, "Agent span-1 usage.cachedInputTokens must be a non-negative safe integer"],
    [{ reasoningTokens: 2 ** 53 }, "Agent span-1 usage.reasoningTokens must be a non-negative safe integer"],
    [{ inputTokens: 10n }, "Agent span-1 usage.inputTokens must be a non-negative safe integer"],
    [42, "Agent span-1 usage must be an object"],
  ]
  for (const [usage, message] of bad) {
    test(`a bad usage is an EvaluationError, never summed: ${message}`, async () => {
      const runtime = new AmlRuntime({ agentProvider: reporting(() => usage).provider })
      const { finishes } = observe(runtime)
      await expectEvaluationError(runtime.evaluate(<Agent>x</Agent>), message)
      expect("usage" in finishes[0]).toBe(false)
    })
  }
})

describe("the ACP engine", () => {
  it("maps the scripted ACP agent's prompt-response usage, summed over the session's turns", async () => {
    // The scripted agent answers each turn with { inputTokens: 4, outputTokens: 2, totalTokens: 6 }.
    const runtime = new AmlRuntime({ agentProvider: scriptedAcp().provider })
    const { ends, events, finishes } = observe(runtime)
    await runtime.evaluate(
      <Agent>
        first
        <FollowUp>second</FollowUp>
      </Agent>,
    )
    const total = { inputTokens: 8, outputTokens: 4, totalTokens: 12 }
    expect(ends("Agent")[0].attributes.usage).toEqual(total)
    expect(finishes[0].usage).toEqual(total)
    // The ACP events keep the agent's own JSON string, per turn.
    const completed = events.filter((e) => e.name === "acp.session.prompt.completed")
    expect(completed.map((e) => e.attributes.usage)).toEqual([
      JSON.stringify({ inputTokens: 4, outputTokens: 2, totalTokens: 6 }),
      JSON.stringify({ inputTokens: 4, outputTokens: 2, totalTokens: 6 }),
    ])
  })
})

describe("normalizeUsage", () => {
  test("keeps only reported fields, frozen; refuses bad values with a TypeError", () => {
    const normalized = normalizeUsage({ extra: "x", inputTokens: 3, outputTokens: undefined })
    expect(normalized).toEqual({ inputTokens: 3 })
    expect(Object.isFrozen(normalized)).toBe(true)
    expect(normalizeUsage(undefined)).toBeUndefined()
    expect(normalizeUsage({})).toBeUndefined()
    expect(() => normalizeUsage({ totalTokens: -2 })).toThrow(new TypeError("usage.totalTokens must be a non-negative safe integer"))
    expect(() => normalizeUsage("12")).toThrow(new TypeError("usage must be an object"))
  })
})

describe("maxTokens", () => {
  test("is validated like the other limits, as a runtime and a per-evaluation option", async () => {
    for (const value of [-1, 1.5, "10", Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => new AmlRuntime({ maxTokens: value as any })).toThrow(new TypeError("maxTokens must be a non-negative safe integer"))
      await expectTypeError(new AmlRuntime().evaluate("x", { maxTokens: value as any }), "maxTokens must be a non-negative safe integer")
    }
  })

  it("a Parallel of 4 under maxConcurrentAgents 1: the second reaches it, no third call, everything released", async () => {
    const started: string[] = []
    const agentProvider = new DeterministicAgentProvider({
      respond: (request: any) => {
        started.push(request.prompt)
        return { text: request.prompt, usage: { inputTokens: 40, outputTokens: 20 } }
      },
      supportsSandbox: () => true,
    })
    const sandboxProvider = new DeterministicSandboxProvider()
    const workspaceProvider = new DeterministicWorkspaceProvider()
    const runtime = new AmlRuntime({ agentProvider, maxConcurrentAgents: 1, maxTokens: 100, sandboxProvider, workspaceProvider })
    const { finishes } = observe(runtime)
    const branches = [1, 2, 3, 4].map((n) => (
      <Sandbox>
        <Agent>{`a${n}`}</Agent>
      </Sandbox>
    ))
    const error = await expectEvaluationError(
      runtime.evaluate(
        <Workspace>
          <Parallel>{branches}</Parallel>
        </Workspace>,
      ),
      "AML evaluation reached maxTokens 100 at Agent span-7 (120 tokens used)",
    )
    expect(started).toEqual(["a1", "a2"])
    expect(describeFailure(error)).toEqual({ kind: "limit", message: error.message, retryable: false, spanId: "span-7" })
    expect(sandboxProvider.acquisitions.length).toBeGreaterThan(0)
    expect(sandboxProvider.releases).toHaveLength(sandboxProvider.acquisitions.length)
    expect(workspaceProvider.acquisitions).toHaveLength(1)
    expect(workspaceProvider.releases).toHaveLength(1)
    expect(finishes[0].usage).toEqual({ inputTokens: 80, outputTokens: 40 })
  })

  it("cancels a running call through its signal when another call reaches the budget", async () => {
    let cancelled: unknown
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        if (request.prompt === "fast") return { text: "f", usage: { totalTokens: 50 } }
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => {
            cancelled = context.signal.reason
            reject(context.signal.reason)
          })
        })
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expectEvaluationError(
      runtime.evaluate(
        <Parallel>
          <Agent>slow</Agent>
          <Agent>fast</Agent>
        </Parallel>,
        { maxTokens: 50 },
      ),
      "AML evaluation reached maxTokens 50 at Agent span-2 (50 tokens used)",
    )
    expect(cancelled).toBeDefined()
  })

  test("0 (the default) is no budget; the per-evaluation option replaces the runtime's", async () => {
    const { provider } = reporting(() => ({ totalTokens: 1_000_000 }))
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Pair />)).toBe("[a][b]")
    const runtime = new AmlRuntime({ agentProvider: provider, maxTokens: 10 })
    expect(await runtime.evaluate(<Pair />, { maxTokens: 0 })).toBe("[a][b]")
    await expectEvaluationError(runtime.evaluate(<Pair />), "AML evaluation reached maxTokens 10 at Agent span-1 (1000000 tokens used)")
  })

  it("a resumed journal run counts the recorded usage of replayed steps", async () => {
    const { prompts, provider } = reporting(() => ({ inputTokens: 30, outputTokens: 10 }))
    const journal = createMemoryJournal()
    const steps = [<Agent>s1</Agent>, <Agent>s2</Agent>, <Agent>s3</Agent>]
    const runtime = new AmlRuntime({ agentProvider: provider })
    const first = observe(runtime)
    await runtime.evaluate(steps.slice(0, 2), { journal })
    expect(first.finishes[0].usage).toEqual({ inputTokens: 60, outputTokens: 20 })
    expect(journal.entries().map((e: any) => e.value.usage)).toEqual([
      { inputTokens: 30, outputTokens: 10 },
      { inputTokens: 30, outputTokens: 10 },
    ])
    prompts.length = 0
    // Resumed with a budget: the two replayed steps count 80 tokens, so the third call
    // (40 more) reaches 100 and the evaluation stops there.
    const second = observe(runtime)
    await expectEvaluationError(runtime.evaluate(steps, { journal, maxTokens: 100 }), "AML evaluation reached maxTokens 100 at Agent span-3 (120 tokens used)")
    expect(prompts).toEqual(["s3"])
    expect(second.finishes[0].usage).toEqual({ inputTokens: 90, outputTokens: 30 })
    // A budget the replayed steps alone reach: no provider call starts at all.
    prompts.length = 0
    await expectEvaluationError(runtime.evaluate(steps, { journal, maxTokens: 80 }), "AML evaluation reached maxTokens 80 at Agent span-2 (80 tokens used)")
    expect(prompts).toEqual([])
  })
})

describe("journaled component evaluate() (the one-call path)", () => {
  it("records the usage and replays it without calling the provider", async () => {
    const { prompts, provider } = reporting(() => ({ totalTokens: 25 }))
    const journal = createMemoryJournal()
    const Twice = async () => (await evaluate(<Agent>x</Agent>)) + (await evaluate(<Agent>y</Agent>))
    const runtime = new AmlRuntime({ agentProvider: provider })
    expect(await runtime.evaluate(<Twice />, { journal })).toBe("[x][y]")
    expect(prompts).toEqual(["x", "y"])
    prompts.length = 0
    const { ends, finishes } = observe(runtime)
    expect(await runtime.evaluate(<Twice />, { journal })).toBe("[x][y]")
    expect(prompts).toEqual([])
    expect(ends("Agent").map((e) => e.attributes.usage)).toEqual([{ totalTokens: 25 }, { totalTokens: 25 }])
    expect(finishes[0].usage).toEqual({ totalTokens: 50 })
    await expectEvaluationError(runtime.evaluate(<Twice />, { journal, maxTokens: 50 }), "AML evaluation reached maxTokens 50 at Agent span-2 (50 tokens used)")
    expect(prompts).toEqual([])
  })
})

describe("OpenTelemetry", () => {
  it("emits gen_ai.usage.* on the invoke_agent span from any provider's usage", async () => {
    const { exporter, tracer } = memoryTracing()
    const { provider } = reporting(() => ({ cachedInputTokens: 2, inputTokens: 7, outputTokens: 3, reasoningTokens: 1 }))
    await new AmlRuntime({ agentProvider: provider, trace: createOpenTelemetryTracer({ tracer }) }).evaluate(<Agent>x</Agent>)
    const spans = exporter.getFinishedSpans()
    const agent = spans.find((span) => span.name.startsWith("invoke_agent"))!
    expect(agent.attributes).toMatchObject({
      "aml.usage.inputTokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 2,
      "gen_ai.usage.input_tokens": 7,
      "gen_ai.usage.output_tokens": 3,
      "gen_ai.usage.reasoning.output_tokens": 1,
    })
    const root = spans.find((span) => span.name === "aml.evaluate")!
    expect(root.attributes).toMatchObject({ "aml.usage.inputTokens": 7, "aml.usage.outputTokens": 3 })
    expect(root.attributes["gen_ai.usage.input_tokens"]).toBeUndefined()
  })
})
