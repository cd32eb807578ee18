// describeFailure (docs/JOURNAL.md "Failure channel", issue 13): every error family the
// runtime raises, table-driven from real evaluations; nested causes, AggregateErrors,
// lookalikes from another package copy, secrets kept out, and the finish event.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import {
  Agent,
  AmlRuntime,
  EvaluationError,
  Parallel,
  Sandbox,
  Script,
  Tool,
  Workspace,
  WorkspaceConflictError,
  defineTool,
  describeFailure,
  evaluate,
} from "@aml-jsx/sdk"
import { DeterministicWorkspaceProvider } from "@aml-jsx/sdk/testing"

import { failureOf } from "./support/schemas.js"

const SECRET = "sk-live-4f9c2b7e"

const answering = { name: "p", run: async (request: any) => ({ text: request.prompt }) }
const leaking = {
  name: "p",
  run: async () => {
    throw new Error(`401 from upstream: token ${SECRET} rejected (OPENAI_API_KEY=${SECRET})`)
  },
}
const throwing = (error: unknown) => ({
  name: "p",
  run: async () => {
    throw error
  },
})

const echo = defineTool({
  description: "Echo",
  execute: async (input: { text: string }) => input,
  input: z.object({ text: z.string() }),
  name: "echo",
  output: z.object({ text: z.string() }),
})

async function fails(runtime: AmlRuntime, tree: unknown, options?: any) {
  return failureOf(() => runtime.evaluate(tree as any, options))
}

type Row = [label: string, produce: () => Promise<unknown>, kind: string, retryable: boolean, message: string | RegExp, spanId?: string]

const rows: Row[] = [
  [
    "cancellation (AbortError reason)",
    () => {
      const controller = new AbortController()
      async function Slow() {
        controller.abort()
        await new Promise((resolve) => setTimeout(resolve, 5))
        return "late"
      }
      return fails(new AmlRuntime(), <Slow />, { signal: controller.signal })
    },
    "cancelled",
    true,
    "The AML evaluation was cancelled",
  ],
  [
    "maxAgentCalls",
    () => fails(new AmlRuntime({ agentProvider: answering, maxAgentCalls: 1 }), [<Agent>a</Agent>, <Agent>b</Agent>]),
    "limit",
    false,
    "AML evaluation exceeded maxAgentCalls 1 at Agent span-2",
    "span-2",
  ],
  [
    "maxDepth",
    () => {
      const Deep = ({ n }: { n: number }): any => (n === 0 ? "x" : <Deep n={n - 1} />)
      return fails(new AmlRuntime({ maxDepth: 3 }), <Deep n={10} />)
    },
    "limit",
    false,
    "AML evaluation exceeded maxDepth 3",
  ],
  ["placement", () => fails(new AmlRuntime(), <Tool use={echo} />), "configuration", false, "<Tool> is only valid inside <Agent>"],
  [
    "allowlist",
    () =>
      fails(
        new AmlRuntime({ agentProvider: answering, allowedTools: [] }),
        <Agent>
          go<Tool use={echo} />
        </Agent>,
      ),
    "configuration",
    false,
    'Tool "echo" is not allowed by this runtime',
  ],
  [
    "structured schema",
    () => {
      const provider = { name: "p", run: async () => ({ structured: { n: "not a number" }, text: "" }) }
      async function Typed() {
        const value = await evaluate(<Agent>n?</Agent>, z.object({ n: z.number() }))
        return String(value.n)
      }
      return fails(new AmlRuntime({ agentProvider: provider }), <Typed />)
    },
    "configuration",
    false,
    'Agent "p" (span-1) returned invalid structured output',
    "span-1",
  ],
  [
    "a provider outage, its raw text withheld",
    () => fails(new AmlRuntime({ agentProvider: leaking }), <Agent>hi</Agent>),
    "agent",
    true,
    'Agent "p" (span-1) failed',
    "span-1",
  ],
  [
    "an invalid provider response",
    () => fails(new AmlRuntime({ agentProvider: { name: "p", run: async () => 42 } as any }), <Agent>hi</Agent>),
    "agent",
    true,
    'Agent "p" (span-1) returned an invalid response',
    "span-1",
  ],
  [
    "a callable Tool's invalid input",
    () => {
      async function Calls() {
        await (echo as any)({ text: 7 })
        return "no"
      }
      return fails(new AmlRuntime(), <Calls />)
    },
    "tool",
    false,
    /^Tool "echo" input/,
  ],
  [
    "a Sandbox acquisition failure",
    () => fails(new AmlRuntime({ sandboxProvider: { name: "s", acquire: async () => Promise.reject(new Error(SECRET)) } as any }), <Sandbox>x</Sandbox>),
    "sandbox",
    true,
    'Sandbox provider "s" failed to acquire',
  ],
  [
    "a Workspace acquisition failure",
    () => fails(new AmlRuntime({ workspaceProvider: { name: "w", acquire: async () => Promise.reject(new Error(SECRET)) } as any }), <Workspace>x</Workspace>),
    "workspace",
    true,
    'Workspace provider "w" failed to acquire',
  ],
  [
    "a Workspace conflict (nested cause)",
    async () => {
      const provider = new DeterministicWorkspaceProvider()
      const runtime = new AmlRuntime({ workspaceProvider: provider })
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      async function Holder() {
        await held
        return "held"
      }
      const first = runtime.evaluate(
        <Workspace id="one">
          <Holder />
        </Workspace>,
      )
      while (provider.acquisitions.length === 0) await new Promise((resolve) => setTimeout(resolve, 2))
      const error = await fails(runtime, <Workspace id="one">x</Workspace>)
      release()
      await first
      return error
    },
    "workspace",
    true,
    'Workspace provider "deterministic-workspace" failed to acquire',
  ],
  [
    "a Script's non-zero exit, stderr withheld",
    () => fails(new AmlRuntime(), <Script shell="sh">{`echo ${SECRET} >&2; exit 3`}</Script>),
    "script",
    false,
    "<Script> exited with code 3",
  ],
  [
    "a Script timeout",
    () => fails(new AmlRuntime(), <Script shell="sh" timeoutMs={50}>{"sleep 5"}</Script>),
    "script",
    true,
    "<Script> timed out after 50 ms",
  ],
  [
    "a Script's output budget",
    () => fails(new AmlRuntime(), <Script shell="sh">{"head -c 5000000 /dev/zero"}</Script>),
    "limit",
    false,
    "<Script> host output exceeded 4194304 bytes",
  ],
  [
    "an option check (TypeError)",
    () => fails(new AmlRuntime(), "x", { journal: {} }),
    "configuration",
    false,
    "evaluate() journal must be an object with entries() and append() methods",
  ],
  [
    "an application error AML did not raise",
    () => {
      const Broken = () => {
        throw new Error(`database password ${SECRET}`)
      }
      return fails(new AmlRuntime(), <Broken />)
    },
    "internal",
    false,
    "The workflow failed with an error AML did not raise",
  ],
  [
    "Parallel branches (AggregateError): first branch's kind, retryable only if all are",
    () =>
      fails(
        new AmlRuntime({ agentProvider: leaking }),
        <Parallel>
          <Agent>a</Agent>
          <Tool use={echo} />
        </Parallel>,
      ),
    "agent",
    false,
    "AML Parallel branches failed",
    "span-1",
  ],
]

describe("describeFailure over real evaluations", () => {
  it.each(rows)("%s", async (_, produce, kind, retryable, message, spanId) => {
    const error = await produce()
    const failure = describeFailure(error)
    expect(Object.isFrozen(failure)).toBe(true)
    expect(failure.kind).toBe(kind)
    expect(failure.retryable).toBe(retryable)
    if (typeof message === "string") expect(failure.message).toBe(message)
    else expect(failure.message).toMatch(message)
    expect(failure.spanId).toBe(spanId)
    expect(Object.keys(failure)).toEqual(spanId === undefined ? ["kind", "message", "retryable"] : ["kind", "message", "retryable", "spanId"])
    expect(JSON.stringify(failure)).not.toContain(SECRET)
  })
})

describe("causes, aggregates and other copies", () => {
  it("an Agent failure caused by a limit, a cancellation or a conflict takes that kind", async () => {
    const limit = new EvaluationError("AML evaluation exceeded maxDepth 4")
    const conflict = new WorkspaceConflictError("shared")
    for (const [cause, kind, retryable] of [
      [limit, "limit", false],
      [conflict, "workspace", true],
      [new DOMException("stop", "AbortError"), "cancelled", true],
      [new Error("ECONNRESET"), "agent", true],
    ] as const) {
      const error = await fails(new AmlRuntime({ agentProvider: throwing(cause) }), <Agent>x</Agent>)
      expect(describeFailure(error)).toEqual({ kind, message: 'Agent "p" (span-1) failed', retryable, spanId: "span-1" })
    }
  })

  it("looks through nested AggregateErrors", () => {
    const inner = new AggregateError(
      [new EvaluationError('Agent "p" (span-4) failed', { cause: new Error("503") }), new DOMException("t", "TimeoutError")],
      "AML component and concurrent nested evaluations failed",
    )
    const outer = new AggregateError([inner, new Error("finish listener")], "AML evaluation and finish listeners both failed")
    expect(describeFailure(outer)).toEqual({
      kind: "agent",
      message: "AML evaluation and finish listeners both failed",
      retryable: false,
      spanId: "span-4",
    })
    expect(describeFailure(inner)).toEqual({
      kind: "agent",
      message: "AML component and concurrent nested evaluations failed",
      retryable: true,
      spanId: "span-4",
    })
  })

  it("is structural: lookalikes from another package copy classify the same", () => {
    const copy = (name: string, message: string, extra: object = {}) => Object.assign(Object.create(null), { message, name, ...extra })
    expect(describeFailure(copy("EvaluationError", "AML evaluation exceeded maxAgentCalls 3 at Agent span-9"))).toEqual({
      kind: "limit",
      message: "AML evaluation exceeded maxAgentCalls 3 at Agent span-9",
      retryable: false,
      spanId: "span-9",
    })
    expect(describeFailure(copy("Error", "x", { code: "AML_WORKSPACE_CONFLICT" })).kind).toBe("workspace")
    expect(describeFailure(copy("ToolOutputError", 'Tool "t" output failed schema validation'))).toEqual({
      kind: "tool",
      message: 'Tool "t" output failed schema validation',
      retryable: false,
    })
    expect(describeFailure(copy("EvaluationError", "AML engine panicked: index out of bounds"))).toEqual({
      kind: "internal",
      message: "AML failed internally",
      retryable: false,
    })
  })

  it("survives hostile values and counts a custom abort reason as cancelled with the signal", () => {
    const hostile = new Proxy({}, { get: () => { throw new Error("trap") } })
    expect(describeFailure(hostile).kind).toBe("internal")
    for (const value of [undefined, null, "boom", 42]) expect(describeFailure(value).kind).toBe("internal")
    const controller = new AbortController()
    const reason = { why: "user left" }
    controller.abort(reason)
    expect(describeFailure(reason, { signal: controller.signal })).toEqual({
      kind: "cancelled",
      message: "The AML evaluation was cancelled",
      retryable: true,
    })
    const loop: any = new EvaluationError('Agent "p" (span-1) failed')
    loop.cause = loop
    expect(describeFailure(loop).kind).toBe("agent")
  })
})

describe("the finish event", () => {
  it("carries failure on a failed evaluation as a lazy non-enumerable member", async () => {
    const runtime = new AmlRuntime({ agentProvider: leaking })
    const finishes: any[] = []
    runtime.on("finish", (event) => void finishes.push(event))
    await fails(runtime, <Agent>hi</Agent>)
    await runtime.evaluate("ok")
    const [failed, ok] = finishes
    expect(Object.keys(failed)).toEqual(["error", "runId", "signal", "status"])
    expect(Object.isFrozen(failed)).toBe(true)
    expect(failed.failure).toEqual({ kind: "agent", message: 'Agent "p" (span-1) failed', retryable: true, spanId: "span-1" })
    expect(failed.failure).toBe(failed.failure)
    expect(ok.failure).toBeUndefined()
  })
})
