// The record sinks' batches (lib/observability/trace-batch.js, crates/aml-engine/src/trace_batch.rs):
// what a sink reads from them is what the public events say, record for record, across many
// batches, with strings kept in the table (recurring) and strings sent per batch (long ones).
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"

const SINK = Symbol.for("@aml-jsx/sdk/trace-record-sink")
const TYPES = ["span.start", "span.end", "event"]
const LONG = "a prompt longer than the table keeps, so it crosses in its own batch: ".repeat(2)

const provider = { name: "batch-test", run: async (request: any) => ({ text: `re:${request.prompt.length}` }) }

function FanOut() {
  return Promise.all(Array.from({ length: 300 }, (_, i) => evaluate(<Agent>{i % 2 === 0 ? `${LONG}${i}` : `short ${i}`}</Agent>))).then(
    (texts) => texts.length,
  )
}

/** A record as the public event it stands for: the fields both carry. */
function fromRecord(record: any[]) {
  const type = record[0]
  const [attributes, sensitive] = type === 0 ? [record[6], record[7]] : type === 1 ? [record[5], record[6]] : [record[4], record[5]]
  const view: Record<string, unknown> = { attributes: { ...attributes, ...sensitive }, spanId: record[1], type: TYPES[type] }
  if (type === 0) Object.assign(view, { kind: record[3], name: record[4], parentSpanId: record[2] ?? undefined })
  if (type === 1) Object.assign(view, { kind: record[2], status: record[3] ? "error" : "ok" })
  if (type === 2) view.name = record[2]
  return view
}

function fromEvent(event: any) {
  const view: Record<string, unknown> = { attributes: { ...event.attributes }, spanId: event.spanId, type: event.type }
  if (event.type === "span.start") Object.assign(view, { kind: event.kind, name: event.name, parentSpanId: event.parentSpanId })
  if (event.type === "span.end") Object.assign(view, { kind: event.kind, status: event.status })
  if (event.type === "event") view.name = event.name
  return view
}

async function traced(listener: any) {
  const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0, trace: listener })
  expect(await runtime.evaluate(<FanOut />)).toBe("300")
}

describe("trace batches", () => {
  for (const captureContent of [false, true]) {
    it(`give a sink the public events' records, record for record (captureContent ${captureContent})`, async () => {
      const records: any[][] = []
      const sinkListener = Object.assign(() => {}, { captureContent, [SINK]: (_runId: string, record: any[]) => records.push(record) })
      await traced(sinkListener)
      const events: any[] = []
      await traced(Object.assign((event: any) => events.push(event), { captureContent }))

      // 300 Agents span many batches: the table carries the recurring strings across them.
      expect(records.length).toBe(2 * 302)
      expect(records.map(fromRecord)).toEqual(events.map(fromEvent))
      const prompts = records.filter((record) => record[0] === 1 && record[2] === "agent").map((record) => record[6]?.prompt)
      if (captureContent) expect(prompts.filter((prompt) => prompt?.startsWith(LONG))).toHaveLength(150)
      else expect(prompts.every((prompt) => prompt === undefined)).toBe(true)
    })
  }
})
