// createAgentExecutionContext({ trace }) (issue 8 §2.9): the trace identity is a new frozen
// copy with only parentSpanId (when given), runId and spanId.
import { describe, expect, it } from "vitest"

import { createAgentExecutionContext } from "@aml-jsx/sdk/testing"

describe("createAgentExecutionContext trace", () => {
  it("stores a new frozen copy holding only parentSpanId, runId and spanId", () => {
    const trace = { extra: "dropped", parentSpanId: "trace-1", runId: "run", spanId: "span-2" }
    const context = createAgentExecutionContext({ trace } as never)
    expect(context.trace).not.toBe(trace)
    expect(Object.isFrozen(context.trace)).toBe(true)
    expect(Object.keys(context.trace)).toEqual(["parentSpanId", "runId", "spanId"])
    expect(context.trace).toEqual({ parentSpanId: "trace-1", runId: "run", spanId: "span-2" })
    trace.spanId = "changed"
    expect(context.trace.spanId).toBe("span-2")
  })

  it("omits parentSpanId when it is not given, and reads each member once", () => {
    const reads: string[] = []
    const trace = {
      get runId() {
        reads.push("runId")
        return "run"
      },
      get spanId() {
        reads.push("spanId")
        return "span-1"
      },
    }
    const context = createAgentExecutionContext({ trace } as never)
    expect(Object.keys(context.trace)).toEqual(["runId", "spanId"])
    expect(context.trace).toEqual({ runId: "run", spanId: "span-1" })
    expect(reads).toEqual(["runId", "spanId"])
  })
})
