// A synchronous Tool settles without the asynchronous pipeline (lib/tools/tool.js `pipeline`,
// lib/tools/instrumentation.js `runToolSpan`): what an executor returns is still adopted as
// `await` would adopt it, failures still reject (never throw), and spans still close with
// the outcome.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Tool, ToolOutputError, defineTool } from "@aml-jsx/sdk"

import { anyObject, customSchema } from "./support/schemas.js"

const context = () => ({ signal: new AbortController().signal, trace: { runId: "run", spanId: "span" } })

function toolReturning(execute: (input: any) => unknown, output?: any) {
  return defineTool({ description: "t", execute: execute as never, input: anyObject, name: "t", ...(output ? { output } : {}) })
}

describe("the synchronous Tool path", () => {
  it("reads a returned thenable's then once and calls it in a later microtask", async () => {
    const log: string[] = []
    const thenable = {
      get then() {
        log.push("read then")
        return (resolve: (value: unknown) => void) => {
          log.push("called then")
          resolve({ n: 1 })
        }
      },
    }
    const tool = toolReturning(() => thenable)
    const running = tool.execute({}, context())
    log.push("execute returned")
    await expect(running).resolves.toEqual({ n: 1 })
    expect(log).toEqual(["read then", "execute returned", "called then"])
  })

  it("turns a synchronous executor failure, or a throwing then getter, into a rejection", async () => {
    const failing = toolReturning(() => {
      throw new RangeError("sync")
    })
    let running: Promise<unknown> | undefined
    expect(() => {
      running = failing.execute({}, context())
    }).not.toThrow()
    await expect(running).rejects.toThrow(RangeError)
    const badThen = toolReturning(() => ({
      get then() {
        throw new TypeError("then getter")
      },
    }))
    await expect(badThen.execute({}, context())).rejects.toThrow("then getter")
  })

  it("checks the output with a synchronous or an asynchronous validator", async () => {
    const positive = (value: any) => (value.n > 0 ? { value } : { issues: [{ message: "not positive" }] })
    const syncSchema = customSchema(positive)
    const asyncSchema = customSchema(async (value) => positive(value))
    for (const schema of [syncSchema, asyncSchema]) {
      await expect(toolReturning(() => ({ n: 2 }), schema).execute({}, context())).resolves.toEqual({ n: 2 })
      const error = await toolReturning(() => ({ n: -1 }), schema)
        .execute({}, context())
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ToolOutputError)
      expect((error as Error).message).toBe('Tool "t" output failed schema validation')
    }
  })

  it("closes the provider's tool span with the outcome of a synchronous call", async () => {
    const add = defineTool({
      description: "Add",
      execute: ({ a, b }: { a: number; b: number }) => {
        if (a < 0) throw new RangeError("negative")
        return { sum: a + b }
      },
      input: z.object({ a: z.number(), b: z.number() }),
      name: "add",
    })
    const seen: unknown[] = []
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        const tool = request.tools[0]
        seen.push(await tool.execute({ a: 1, b: 2 }, context))
        seen.push(await tool.execute({ a: -1, b: 2 }, context).catch((error: Error) => error.message))
        return { text: "done" }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: provider })
    const ends: any[] = []
    runtime.on("trace", (event: any) => {
      if (event.type === "span.end" && event.kind === "tool") ends.push({ status: event.status, error: event.attributes["error.type"] })
    })
    await expect(
      runtime.evaluate(
        <Agent>
          <Tool use={add} />
          add
        </Agent>,
      ),
    ).resolves.toBe("done")
    expect(seen).toEqual([{ sum: 3 }, "negative"])
    expect(ends).toEqual([
      { error: undefined, status: "ok" },
      { error: "RangeError", status: "error" },
    ])
  })
})
