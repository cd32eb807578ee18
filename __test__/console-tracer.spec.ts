// createConsoleTracer (INVENTORY §2.6): exact line formats, depth, suppression, the frozen
// sink shape, option errors, and one real evaluation through AmlRuntime.
import { AmlRuntime, createConsoleTracer, Fragment } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"
import { afterEach, describe, expect, it, vi } from "vitest"

type Attrs = Record<string, unknown>

// Synthetic events shaped like the runtime's (null-prototype frozen attributes).
function attrs(values: Attrs = {}) {
  return Object.freeze(Object.assign(Object.create(null), values))
}
function start(spanId: string, parentSpanId: string | undefined, kind: string, name: string, a?: Attrs, runId = "r1") {
  return { type: "span.start", runId, spanId, parentSpanId, sequence: 1, timestamp: 0, kind, name, attributes: attrs(a) }
}
function end(
  spanId: string,
  parentSpanId: string | undefined,
  kind: string,
  name: string,
  durationMs: number,
  status = "ok",
  a?: Attrs,
  runId = "r1",
) {
  return {
    type: "span.end",
    runId,
    spanId,
    parentSpanId,
    sequence: 2,
    timestamp: 0,
    kind,
    name,
    status,
    durationMs,
    attributes: attrs(a),
  }
}
function point(spanId: string, parentSpanId: string | undefined, name: string, a?: Attrs, runId = "r1") {
  return { type: "event", runId, spanId, parentSpanId, sequence: 3, timestamp: 0, name, attributes: attrs(a) }
}

function recorder() {
  const lines: string[] = []
  const sink = createConsoleTracer({ write: (line: string) => void lines.push(line) }) as (event: unknown) => unknown
  return { lines, sink }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("createConsoleTracer line formats", () => {
  it("renders start, end and point lines with depth from parentSpanId", () => {
    const { lines, sink } = recorder()
    sink(start("trace-0", undefined, "evaluation", "evaluate"))
    sink(start("span-1", "trace-0", "agent", "Agent"))
    sink(start("trace-1", "span-1", "agent", "agent.session", { provider: "opencode" }))
    sink(point("trace-1", "span-1", "sandbox.process", { state: "spawn_requested" }))
    sink(start("trace-2", "trace-1", "agent", "agent.turn", { index: 1, kind: "initial" }))
    sink(point("trace-2", "trace-1", "acp.session.prompt.submitted", { sessionId: "session-1" }))
    sink(end("trace-2", "trace-1", "agent", "agent.turn", 1234.4, "ok", { sessionId: "session-1" }))
    sink(end("trace-1", "span-1", "agent", "agent.session", 3.25))
    sink(end("span-1", "trace-0", "agent", "Agent", 10, "error", { "error.type": "TypeError" }))
    sink(end("trace-0", undefined, "evaluation", "evaluate", 0))
    expect(lines).toEqual([
      "▶ evaluation evaluate",
      "  ▶ agent Agent",
      '    ▶ agent.session provider="opencode"',
      // A point event sits at the depth of the span it happened on (see console-tracer.js).
      '    • sandbox.process state="spawn_requested"',
      '      ▶ agent.turn index=1 kind="initial"',
      '      • acp.session.prompt.submitted sessionId="session-1"',
      '      ✓ agent.turn 1234ms sessionId="session-1"',
      "    ✓ agent.session 3.3ms",
      '  ✗ agent Agent 10ms error.type="TypeError"',
      "✓ evaluation evaluate 0.0ms",
    ])
  })

  it("uses the bare name only when it starts with `${kind}.`", () => {
    const { lines, sink } = recorder()
    sink(start("a", undefined, "component", "Workflow"))
    sink(start("b", undefined, "agent", "agent.cleanup"))
    sink(start("c", undefined, "agent", "agentless"))
    sink(start("d", undefined, "tool", "agent.lookup"))
    sink(start("e", undefined, "sandbox", "sandbox"))
    expect(lines).toEqual([
      "▶ component Workflow",
      "▶ agent.cleanup",
      "▶ agent agentless",
      "▶ tool agent.lookup",
      "▶ sandbox sandbox",
    ])
  })

  it("formats durations with one decimal under 10 ms and rounded from 10 ms", () => {
    const { lines, sink } = recorder()
    for (const ms of [0, 0.04, 1.25, 9.94, 9.96, 10, 10.5, 99.4, 3600.6]) sink(end("s", undefined, "loop", "Loop", ms))
    expect(lines.map((line) => line.slice("✓ loop Loop ".length))).toEqual([
      "0.0ms",
      "0.0ms",
      "1.3ms",
      "9.9ms",
      "10.0ms",
      "10ms",
      "11ms",
      "99ms",
      "3601ms",
    ])
  })

  it("JSON-encodes every attribute value in insertion order", () => {
    const { lines, sink } = recorder()
    sink(
      point("s", undefined, "capability.tool", {
        kind: "javascript",
        count: 2,
        ok: false,
        list: ["a", 'b"c'],
        "execution.id": "x y",
      }),
    )
    sink(point("s", undefined, "agent.session"))
    expect(lines).toEqual([
      '• capability.tool kind="javascript" count=2 ok=false list=["a","b\\"c"] execution.id="x y"',
      "• agent.session",
    ])
  })

  it("drops the three streamed ACP update kinds and keeps the others", () => {
    const { lines, sink } = recorder()
    for (const sessionUpdate of ["agent_message_chunk", "agent_thought_chunk", "tool_call_update", "tool_call", "plan"]) {
      expect(sink(point("t", undefined, "acp.session.update", { sessionId: "s1", sessionUpdate }))).toBeUndefined()
    }
    // The same attribute on another event name is not a reason to drop it.
    sink(point("t", undefined, "agent.output", { sessionUpdate: "agent_message_chunk" }))
    expect(lines).toEqual([
      '• acp.session.update sessionId="s1" sessionUpdate="tool_call"',
      '• acp.session.update sessionId="s1" sessionUpdate="plan"',
      '• agent.output sessionUpdate="agent_message_chunk"',
    ])
  })

  it("tracks depth per run and forgets a run at its evaluation span.end", () => {
    const { lines, sink } = recorder()
    sink(start("trace-0", undefined, "evaluation", "evaluate", {}, "r1"))
    sink(start("trace-0", undefined, "evaluation", "evaluate", {}, "r2"))
    sink(start("trace-1", "trace-0", "component", "A", {}, "r1"))
    sink(start("trace-2", "trace-1", "component", "B", {}, "r1"))
    // r2 has no trace-1 yet: its unknown parent falls back to depth 0.
    sink(start("trace-3", "trace-1", "component", "C", {}, "r2"))
    sink(end("trace-0", undefined, "evaluation", "evaluate", 1, "ok", {}, "r1"))
    // After r1 closed, its span depths are gone, so trace-1 is an unknown parent again.
    sink(point("trace-2", "trace-1", "loop.transition", {}, "r1"))
    expect(lines).toEqual([
      "▶ evaluation evaluate",
      "▶ evaluation evaluate",
      "  ▶ component A",
      "    ▶ component B",
      "▶ component C",
      "✓ evaluation evaluate 1.0ms",
      "• loop.transition",
    ])
  })
})

describe("createConsoleTracer sink and options", () => {
  it("returns a frozen function with a read-only enumerable captureContent", () => {
    const plain = createConsoleTracer()
    const capturing = createConsoleTracer({ captureContent: true })
    expect(typeof plain).toBe("function")
    expect(Object.isFrozen(plain)).toBe(true)
    expect(plain.captureContent).toBe(false)
    expect(capturing.captureContent).toBe(true)
    expect(createConsoleTracer({ captureContent: false }).captureContent).toBe(false)
    expect(Object.getOwnPropertyDescriptor(capturing, "captureContent")).toEqual({
      configurable: false,
      enumerable: true,
      value: true,
      writable: false,
    })
    expect(() => {
      ;(capturing as { captureContent: boolean }).captureContent = false
    }).toThrow(TypeError)
  })

  it("rejects a non-boolean captureContent and a non-function write with exact TypeErrors", () => {
    for (const captureContent of ["true", 1, null]) {
      const call = () => createConsoleTracer({ captureContent } as never)
      expect(call).toThrow(TypeError)
      expect(call).toThrow(/^createConsoleTracer captureContent must be a boolean$/)
    }
    for (const write of ["console.log", {}, null]) {
      const call = () => createConsoleTracer({ write } as never)
      expect(call).toThrow(TypeError)
      expect(call).toThrow(/^createConsoleTracer write must be a function$/)
    }
  })

  it("returns whatever the writer returns, including a rejected promise", async () => {
    const failure = new Error("disk full")
    const rejected = Promise.reject(failure)
    rejected.catch(() => {})
    const sink = createConsoleTracer({ write: () => rejected }) as (event: unknown) => unknown
    expect(sink(point("s", undefined, "agent.session"))).toBe(rejected)
    const counted = createConsoleTracer({ write: (line: string) => line.length }) as (event: unknown) => unknown
    expect(counted(point("s", undefined, "agent.session"))).toBe("• agent.session".length)
  })

  it("writes to console.log by default", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    const sink = createConsoleTracer() as (event: unknown) => unknown
    sink(start("trace-0", undefined, "evaluation", "evaluate"))
    expect(log).toHaveBeenCalledTimes(1)
    expect(log).toHaveBeenCalledWith("▶ evaluation evaluate")
  })
})

describe("createConsoleTracer with AmlRuntime", () => {
  function Inner() {
    return "b"
  }
  async function Outer() {
    return ["a", jsx(Inner, {}), jsx(Fragment, { children: "c" })]
  }
  function Boom(): never {
    throw new RangeError("nope")
  }

  it("draws the evaluated component tree", async () => {
    const lines: string[] = []
    const runtime = new AmlRuntime({ trace: createConsoleTracer({ write: (line: string) => void lines.push(line) }) })
    await expect(runtime.evaluate(jsx(Outer, {}))).resolves.toBe("abc")
    await expect(runtime.evaluate([jsx(Boom, {})])).rejects.toThrow("nope")
    const durations = lines.map((line) => line.replace(/ \d+(\.\d)?ms/, " <d>"))
    expect(durations).toEqual([
      "▶ evaluation evaluate",
      "  ▶ component Outer",
      "    ▶ component Inner",
      "    ✓ component Inner <d>",
      "    ▶ component Fragment",
      "    ✓ component Fragment <d>",
      "  ✓ component Outer <d>",
      "✓ evaluation evaluate <d>",
      "▶ evaluation evaluate",
      "  ▶ component Boom",
      '  ✗ component Boom <d> error.type="RangeError"',
      '✗ evaluation evaluate <d> error.type="RangeError"',
    ])
  })

  it("routes a rejected writer promise to onTraceError", async () => {
    const failure = new Error("sink down")
    const seen: Array<[unknown, string]> = []
    const runtime = new AmlRuntime({
      trace: createConsoleTracer({ write: () => Promise.reject(failure) }),
      onTraceError: (error: unknown, event: { type: string }) => void seen.push([error, event.type]),
    })
    await expect(runtime.evaluate(jsx(Inner, {}))).resolves.toBe("b")
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(seen).toEqual([
      [failure, "span.start"],
      [failure, "span.start"],
      [failure, "span.end"],
      [failure, "span.end"],
    ])
  })
})
