// The one-call path of `evaluate(<Agent>prompt</Agent>)` (lib/agents/direct.js,
// crates/aml-engine/src/text_agent.rs) must be invisible: for every outcome it gives the
// same result, error (class, message, cause) and trace as the generic driver, which the same
// Agent takes when its prompt is wrapped in an array.
import { afterEach, describe, expect, it, vi } from "vitest"

import { Agent, AmlRuntime, Sandbox, evaluate } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { NativeEvaluation } from "../lib/core/native.js"

type Variant = "direct" | "generic"

/** The Agent node: a string child takes the one-call path, an array child the driver. */
function agentNode(variant: Variant, prompt: string, props: Record<string, unknown> = {}) {
  return variant === "direct" ? <Agent {...props}>{prompt}</Agent> : <Agent {...props}>{[prompt]}</Agent>
}

/** What a run shows a caller: the text, or the error's class, message and cause chain. */
function outcome(settled: PromiseSettledResult<string>) {
  if (settled.status === "fulfilled") return { text: settled.value }
  const chain: string[] = []
  for (let error: any = settled.reason; error !== undefined; error = error?.cause) {
    chain.push(`${error?.constructor?.name}: ${error?.message ?? String(error)}`)
    if (chain.length > 5) break
  }
  return { chain }
}

/** Trace events without their clock readings and run id. */
function traceShape(events: any[]) {
  return events.map(({ timestamp, durationMs, runId, ...rest }) => rest)
}

async function run(
  variant: Variant,
  options: Record<string, unknown>,
  Root: (props: { variant: Variant }) => unknown,
  signal?: AbortSignal,
) {
  const runtime = new AmlRuntime(options as any)
  const trace: any[] = []
  const finish: any[] = []
  runtime.on("trace", (event: any) => void trace.push(event), { captureContent: true })
  runtime.on("finish", (event: any) => void finish.push({ status: event.status, error: event.error?.message }))
  const settled = await Promise.allSettled([runtime.evaluate(<Root variant={variant} />, signal ? { signal } : {})])
  return { finish, outcome: outcome(settled[0]), trace: traceShape(trace) }
}

/** Runs `Root` on both paths and expects one observable outcome; returns it. */
async function same(options: Record<string, unknown>, Root: (props: { variant: Variant }) => unknown) {
  const direct = await run("direct", options, Root)
  const generic = await run("generic", options, Root)
  expect(direct).toEqual(generic)
  return direct
}

/** Every ECMAScript WhiteSpace and LineTerminator code point: the prompt is trimmed of them. */
const WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

const echo = { name: "p", async run(request: any) { return { text: `[${request.prompt}]` } } }

afterEach(() => {
  vi.restoreAllMocks()
})

describe("evaluate(<Agent>prompt</Agent>) from a component", () => {
  it("takes the one-call path only for a string child", async () => {
    const calls = vi.spyOn(NativeEvaluation.prototype, "enterTextAgent")
    function Root({ variant }: { variant: Variant }) {
      return evaluate(agentNode(variant, "x"))
    }
    await run("generic", { agentProvider: echo }, Root)
    expect(calls).not.toHaveBeenCalled()
    await run("direct", { agentProvider: echo }, Root)
    expect(calls).toHaveBeenCalledTimes(1)
  })

  it("resolves with the same text and trace as the driver, fanned out", async () => {
    const seen = await same({ agentProvider: echo }, ({ variant }) =>
      Promise.all(["a", "  b  ", "c", WHITESPACE, `${WHITESPACE}d\u2028e${WHITESPACE}`].map((p) => evaluate(agentNode(variant, p)))).then(
        (texts) => texts.join("|"),
      ),
    )
    expect(seen.outcome).toEqual({ text: "[a]|[b]|[c]|[]|[d\u2028e]" })
    expect(seen.trace.filter((event: any) => event.kind === "agent" && event.type === "span.end")).toHaveLength(5)
  })

  it("queues behind maxConcurrentAgents like the driver", async () => {
    const seen = await same({ agentProvider: echo, maxConcurrentAgents: 1 }, ({ variant }) =>
      Promise.all(["a", "b"].map((p) => evaluate(agentNode(variant, p)))).then((texts) => texts.join("|")),
    )
    expect(seen.outcome).toEqual({ text: "[a]|[b]" })
  })

  it("fails the same way when the provider throws or answers badly", async () => {
    const throwing = { name: "p", async run() { throw new TypeError("down") } }
    const thrown = await same({ agentProvider: throwing }, ({ variant }) => evaluate(agentNode(variant, "x")))
    expect(thrown.outcome.chain).toEqual(['EvaluationError: Agent "p" (span-1) failed', "TypeError: down"])
    const invalid = { name: "p", async run() { return { text: 1 } } }
    const bad = await same({ agentProvider: invalid }, ({ variant }) => evaluate(agentNode(variant, "x")))
    expect(bad.outcome.chain?.[0]).toBe('EvaluationError: Agent "p" (span-1) returned an invalid response')
  })

  it("stops at the same engine error: no provider, maxAgentCalls, maxDepth", async () => {
    const none = await same({}, ({ variant }) => evaluate(agentNode(variant, "x")))
    expect(none.outcome.chain).toEqual(["EvaluationError: Agent span-1 has no provider"])
    const budget = await same({ agentProvider: echo, maxAgentCalls: 1 }, async ({ variant }) => {
      await evaluate(agentNode(variant, "a"))
      return evaluate(agentNode(variant, "b"))
    })
    expect(budget.outcome.chain?.[0]).toMatch(/^EvaluationError: AML evaluation exceeded maxAgentCalls 1/)
    const depth = await same({ agentProvider: echo, maxDepth: 1 }, ({ variant }) => evaluate(agentNode(variant, "x")))
    expect(depth.outcome.chain?.[0]).toMatch(/maxDepth/)
  })

  it("is cancelled the same way while the provider runs", async () => {
    const results: unknown[] = []
    for (const variant of ["direct", "generic"] as const) {
      const controller = new AbortController()
      const waiting = {
        name: "p",
        run(_request: any, context: any) {
          queueMicrotask(() => controller.abort(new Error("stop")))
          return new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)))
        },
      }
      results.push(await run(variant, { agentProvider: waiting }, () => evaluate(agentNode(variant, "x")), controller.signal))
    }
    expect(results[0]).toEqual(results[1])
    expect((results[0] as any).outcome.chain[0]).toBe('EvaluationError: Agent "p" (span-1) failed')
  })

  it("keeps Agent props, Sandboxes and nested Agents on the driver's path", async () => {
    const calls = vi.spyOn(NativeEvaluation.prototype, "enterTextAgent")
    const withModel = await same({ agentProvider: echo }, ({ variant }) => evaluate(agentNode(variant, "x", { model: "m" })))
    expect(withModel.outcome).toEqual({ text: "[x]" })
    const sandbox = new DeterministicSandboxProvider()
    function Inner({ variant }: { variant: Variant }) {
      return evaluate(agentNode(variant, "x"))
    }
    const inSandbox = await same({ agentProvider: echo }, ({ variant }) => (
      <Sandbox provider={sandbox}>
        <Inner variant={variant} />
      </Sandbox>
    ))
    expect(inSandbox.outcome.chain?.[0]).toMatch(/^EvaluationError: Agent provider "p" cannot run inside Sandbox provider/)
    expect(calls).not.toHaveBeenCalled()
  })
})

describe("strings around the first native copy's buffer size (src/hot_path/raw_call.rs)", () => {
  it("crosses every length near 128 UTF-8 bytes whole, with 1-, 2-, 3- and 4-byte characters", async () => {
    const runtime = new AmlRuntime({
      agentProvider: { name: "p", async run(request: any) { return { text: request.prompt } } },
      maxAgentCalls: 0,
    })
    const prompts: string[] = []
    for (const unit of ["a", "é", "€", "😀"]) {
      for (let bytes = 110; bytes <= 140; bytes++) {
        const count = Math.floor(bytes / new TextEncoder().encode(unit).length)
        prompts.push(`x${unit.repeat(count)}y`)
      }
    }
    function Root() {
      return Promise.all(prompts.map((prompt) => evaluate(<Agent>{prompt}</Agent>)))
    }
    const texts = await runtime.evaluate(<Root />)
    expect(texts).toBe(prompts.join(""))
  })
})
