// Agent-driven Tool calls that go wrong (INVENTORY TL-3, TL-5, LIM-2): executors that throw,
// return non-JSON or never settle, providers that misbehave, calls after the Agent ended.
// Each gives the documented error and the runtime keeps working.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, EvaluationError, Tool, ToolOutputError, defineTool } from "@aml-jsx/sdk"

import { expectError, failureOf } from "./support/schemas.js"

const lookup = defineTool({
  description: "Read one order",
  execute: async ({ id }: { id: string }) => ({ id, status: "paid" }),
  input: z.object({ id: z.string() }),
  name: "lookup_order",
})

/** A provider that calls every granted Tool with `input` and reports the results as text. */
function callingProvider(input: unknown = { id: "A-42" }) {
  return {
    provider: {
      name: "p",
      async run(request: any, context: any) {
        const results = []
        for (const tool of request.tools) results.push(await tool.execute(input, context))
        return { text: JSON.stringify(results) }
      },
    },
  }
}

describe("hostile executors and providers", () => {
  it("surfaces an executor failure to the provider, which may recover", async () => {
    const boom = new Error("database down")
    const failing = defineTool({ description: "d", execute: () => { throw boom }, input: z.object({}), name: "failing" })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const error = await request.tools[0].execute({}, context).catch((e: unknown) => e)
        return { text: error === boom ? "recovered" : "wrong error" }
      },
    }
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={failing} />go</Agent>)).resolves.toBe("recovered")
  })

  it("wraps an unhandled executor failure as the Agent's failure", async () => {
    const boom = new Error("database down")
    const failing = defineTool({ description: "d", execute: () => { throw boom }, input: z.object({}), name: "failing" })
    const error = await failureOf(() => new AmlRuntime({ agentProvider: callingProvider({}).provider }).evaluate(<Agent><Tool use={failing} />go</Agent>))
    expectError(error, EvaluationError, 'Agent "p" (span-1) failed')
    expect(error.cause).toBe(boom)
  })

  it("rejects non-JSON executor output with ToolOutputError", async () => {
    const leaky = defineTool({ description: "d", execute: () => ({ client: new Map() }) as never, input: z.object({}), name: "leaky" })
    const error = await failureOf(() => new AmlRuntime({ agentProvider: callingProvider({}).provider }).evaluate(<Agent><Tool use={leaky} />go</Agent>))
    expectError(error.cause, ToolOutputError, 'Tool "leaky" output is not valid JSON')
    expectError(error.cause.cause, TypeError, "Tool output contains a non-plain object")
  })

  it("rejects a never-settling executor's call with the abort reason, and the evaluation ends", async () => {
    const controller = new AbortController()
    let toolCall: Promise<unknown> | undefined
    let executorSignal: AbortSignal | undefined
    const hang = defineTool({
      description: "d",
      execute: (_: unknown, context: any) => {
        executorSignal = context.signal
        setTimeout(() => controller.abort(reason), 5)
        return new Promise<never>(() => {})
      },
      input: z.object({}),
      name: "hang",
    })
    const reason = new Error("user cancelled")
    const provider = {
      name: "p",
      run(request: any, context: any) {
        toolCall = request.tools[0].execute({}, context)
        return toolCall
      },
    }
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={hang} />go</Agent>, { signal: controller.signal }))
    // The provider returned the Tool call, which rejected with the reason: the Agent wraps it.
    expect(error.message).toBe('Agent "p" (span-1) failed')
    expect(error.cause).toBe(reason)
    expect(await failureOf(() => toolCall)).toBe(reason)
    expect(executorSignal?.aborted).toBe(true)
  })

  it("combines a provider-narrowed signal with the evaluation's", async () => {
    const narrow = new AbortController()
    const reason = new Error("turn cancelled")
    const hang = defineTool({ description: "d", execute: () => new Promise<never>(() => {}), input: z.object({}), name: "hang" })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const call = request.tools[0].execute({}, { signal: narrow.signal, trace: context.trace })
        narrow.abort(reason)
        return { text: (await call.catch((e: unknown) => e)) === reason ? "narrowed" : "no" }
      },
    }
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={hang} />go</Agent>)).resolves.toBe("narrowed")
  })

  it("hands the executor the provider's narrowed signal itself, not a derived one (TL-3)", async () => {
    const narrow = new AbortController()
    const seen: unknown[] = []
    const spy = defineTool({ description: "d", execute: (_: unknown, context: any) => (seen.push(context.signal), 1), input: z.object({}), name: "spy" })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        await request.tools[0].execute({}, { signal: narrow.signal, trace: context.trace })
        await request.tools[0].execute({}, context)
        return { text: "" }
      },
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={spy} />go</Agent>)
    expect(seen).toHaveLength(2)
    expect(seen[0]).toBe(narrow.signal)
    expect(seen[1]).toBeInstanceOf(AbortSignal)
  })

  it("the evaluation's abort still ends a call made with a narrowed signal that never aborts", async () => {
    const controller = new AbortController()
    const reason = new Error("evaluation cancelled")
    const narrow = new AbortController()
    let executorSignal: AbortSignal | undefined
    let toolCall: Promise<unknown> | undefined
    const hang = defineTool({
      description: "d",
      execute: (_: unknown, context: any) => {
        executorSignal = context.signal
        setTimeout(() => controller.abort(reason), 5)
        return new Promise<never>(() => {})
      },
      input: z.object({}),
      name: "hang",
    })
    const provider = {
      name: "p",
      run(request: any, context: any) {
        toolCall = request.tools[0].execute({}, { signal: narrow.signal, trace: context.trace })
        return toolCall
      },
    }
    const error = await failureOf(() => new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={hang} />go</Agent>, { signal: controller.signal }))
    // The provider returned the Tool call, which rejected with the reason: the Agent wraps it.
    expect(error.message).toBe('Agent "p" (span-1) failed')
    expect(error.cause).toBe(reason)
    expect(await failureOf(() => toolCall)).toBe(reason)
    expect(executorSignal).toBe(narrow.signal)
    expect(narrow.signal.aborted).toBe(false)
  })

  it("refuses wrapper calls after the Agent completed", async () => {
    let kept: any
    const provider = {
      name: "p",
      async run(request: any) {
        kept = request.tools[0]
        return { text: "done" }
      },
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={lookup} />go</Agent>)
    expectError(await failureOf(() => kept.execute({ id: "x" }, {})), EvaluationError, 'Tool "lookup_order" was called after its Agent completed')
  })

  it("rejects a provider returning { text: 42 } and keeps working", async () => {
    const provider = { name: "p", run: async () => ({ text: 42 }) }
    const runtime = new AmlRuntime({ agentProvider: provider as never })
    expectError(await failureOf(() => runtime.evaluate(<Agent><Tool use={lookup} />go</Agent>)), EvaluationError, 'Agent "p" (span-1) returned an invalid response')
    await expect(runtime.evaluate("still alive")).resolves.toBe("still alive")
  })

  it("decodes JSON text sent by a provider at the transport boundary", async () => {
    const { provider } = callingProvider('{"id":"from-json"}')
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={lookup} />go</Agent>)).resolves.toBe(
      '[{"id":"from-json","status":"paid"}]',
    )
  })

  it("races many concurrent calls through one abort listener on the caller's signal", async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => void warnings.push(warning)
    process.on("warning", onWarning)
    const controller = new AbortController()
    const slow = defineTool({
      description: "d",
      execute: async () => (await new Promise((r) => setTimeout(r, 5)), 1),
      input: z.object({}),
      name: "slow",
    })
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const calls = Array.from({ length: 50 }, () => request.tools[0].execute({}, context))
        return { text: String((await Promise.all(calls)).length) }
      },
    }
    try {
      await expect(
        new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={slow} />go</Agent>, { signal: controller.signal }),
      ).resolves.toBe("50")
      await new Promise((r) => setTimeout(r, 10))
    } finally {
      process.off("warning", onWarning)
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([])
  })
})
