// createConsoleTracer (INVENTORY §2.6): a dependency-free TraceSink that renders the trace
// stream as an indented tree of text lines, one line per event.

/** Streamed ACP update kinds that would flood an interactive tree; custom sinks still get them. */
const SUPPRESSED_UPDATES = new Set(["agent_message_chunk", "agent_thought_chunk", "tool_call_update"])

const INDENT = "  "

// Resolved on every call rather than captured, so code that replaces or spies on
// console.log after the tracer was built still sees the lines.
function consoleWrite(line) {
  return console.log(line)
}

function label(kind, name) {
  return name.startsWith(`${kind}.`) ? name : `${kind} ${name}`
}

function formatAttributes(attributes) {
  // Attribute objects have a null prototype; Object.keys only needs own enumerable keys.
  const keys = Object.keys(attributes)
  if (keys.length === 0) return ""
  let text = ""
  for (const key of keys) text += ` ${key}=${JSON.stringify(attributes[key])}`
  return text
}

function formatDuration(ms) {
  return ms < 10 ? `${ms.toFixed(1)}ms` : `${Math.round(ms)}ms`
}

function suppressed(event) {
  return (
    event.type === "event" &&
    event.name === "acp.session.update" &&
    SUPPRESSED_UPDATES.has(event.attributes.sessionUpdate)
  )
}

export function createConsoleTracer(options) {
  const captureOption = options?.captureContent
  if (captureOption !== undefined && typeof captureOption !== "boolean") {
    throw new TypeError("createConsoleTracer captureContent must be a boolean")
  }
  const writeOption = options?.write
  if (writeOption !== undefined && typeof writeOption !== "function") {
    throw new TypeError("createConsoleTracer write must be a function")
  }
  const write = writeOption ?? consoleWrite

  /** runId → (spanId → depth). One tracer may observe concurrent evaluations. */
  const runs = new Map()

  // Depth comes from the parent span: a root has depth 0, a child one more than its
  // parent. The engine gives a point event the spanId of the span it happened on and that
  // span's parentSpanId, so the same rule draws a point event at its span's own depth, not
  // depth + 1. That is what the illustrative trace in observability.mdx shows: the
  // `• sandbox.process` lines sit at the indentation of `▶ agent.session`, and the
  // `• acp.session.*` lines at that of `▶ agent.turn`. An unknown parent (a sink attached
  // mid-run) falls back to depth 0 rather than failing.
  function depthOf(depths, event) {
    const parent = event.parentSpanId
    if (parent === undefined) return 0
    const parentDepth = depths.get(parent)
    return parentDepth === undefined ? 0 : parentDepth + 1
  }

  function sink(event) {
    if (suppressed(event)) return undefined
    let depths = runs.get(event.runId)
    if (depths === undefined) {
      depths = new Map()
      runs.set(event.runId, depths)
    }
    const depth = depthOf(depths, event)
    const indent = INDENT.repeat(depth)
    const attrs = formatAttributes(event.attributes)
    let line
    if (event.type === "span.start") {
      depths.set(event.spanId, depth)
      line = `${indent}▶ ${label(event.kind, event.name)}${attrs}`
    } else if (event.type === "span.end") {
      const mark = event.status === "ok" ? "✓" : "✗"
      line = `${indent}${mark} ${label(event.kind, event.name)} ${formatDuration(event.durationMs)}${attrs}`
      // The evaluation span closes last, so nothing of this run can need the depths again.
      if (event.kind === "evaluation") runs.delete(event.runId)
    } else {
      line = `${indent}• ${event.name}${attrs}`
    }
    // Returned, not awaited: the runtime routes a rejected writer promise to onTraceError.
    return write(line)
  }

  Object.defineProperty(sink, "captureContent", {
    configurable: false,
    enumerable: true,
    value: captureOption ?? false,
    writable: false,
  })
  return Object.freeze(sink)
}
