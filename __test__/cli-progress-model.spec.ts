// The progress display's model (lib/cli/progress/tracker.js) and its lines (render.js),
// fed trace events by hand: which spans become rows, when a Sandbox counts as acquired,
// what the summary counts, and how the block fits the terminal.
import { describe, expect, it } from "vitest"

import { ProgressTracker } from "../lib/cli/progress/tracker.js"
import { formatElapsed, renderProgress } from "../lib/cli/progress/render.js"

let sequence = 0
const start = (spanId: string, parentSpanId: string | undefined, kind: string, name: string, attributes: Record<string, unknown> = {}) => ({
  type: "span.start", runId: "r", spanId, parentSpanId, kind, name, attributes, sequence: ++sequence, timestamp: 0,
})
const end = (spanId: string, kind: string, name: string, status = "ok", attributes: Record<string, unknown> = {}) => ({
  type: "span.end", runId: "r", spanId, kind, name, status, attributes, durationMs: 1, sequence: ++sequence, timestamp: 0,
})

describe("ProgressTracker", () => {
  it("shows Agents, Scripts and outer Sandboxes and Workspaces; a Sandbox is acquiring until something runs in it", () => {
    const tracker = new ProgressTracker()
    tracker.apply(start("trace-0", undefined, "evaluation", "evaluate"), 0)
    tracker.apply(start("span-1", "trace-0", "workspace", "Workspace"), 1)
    expect([...tracker.rows.values()].map((row) => [row.label, row.acquired])).toEqual([["Workspace", false]])
    tracker.apply(start("span-2", "span-1", "sandbox", "Sandbox", { nested: false }), 2)
    expect([...tracker.rows.values()].map((row) => [row.label, row.acquired])).toEqual([["Workspace", true], ["Sandbox", false]])
    tracker.apply(start("span-3", "span-2", "sandbox", "Sandbox", { nested: true }), 3)
    tracker.apply(start("span-4", "span-3", "component", "Review"), 4)
    tracker.apply(start("span-5", "span-4", "agent", "Agent"), 5)
    tracker.apply(start("span-6", "span-5", "agent", "agent.session", { provider: "opencode", model: "m1" }), 6)
    tracker.apply(start("span-7", "span-6", "agent", "agent.turn", { index: 2, kind: "follow-up" }), 7)
    tracker.apply(start("span-8", "span-4", "script", "Script", { command: "npm", environment: "sandbox", mode: "exec" }), 8)
    expect([...tracker.rows.values()].map(({ label, detail, turn, acquired }) => ({ label, detail, turn, acquired }))).toEqual([
      { label: "Workspace", detail: undefined, turn: undefined, acquired: true },
      { label: "Sandbox", detail: undefined, turn: undefined, acquired: true },
      { label: "Agent span-5", detail: "opencode m1", turn: 2, acquired: true },
      { label: "Script", detail: "npm", turn: undefined, acquired: true },
    ])
  })

  it("counts finished rows for the summary, with failures and journal replays", () => {
    const tracker = new ProgressTracker()
    expect(tracker.summary()).toBe("")
    for (const [id, status, replayed] of [["span-1", "ok", true], ["span-2", "ok", true], ["span-3", "error", false]] as const) {
      tracker.apply(start(id, "trace-0", "agent", "Agent"), 0)
      tracker.apply(end(id, "agent", "Agent", status, replayed ? { "journal.replayed": true } : {}), 1)
    }
    tracker.apply(start("span-4", "trace-0", "script", "Script", { shell: "sh" }), 0)
    tracker.apply(end("span-4", "script", "Script"), 1)
    expect(tracker.rows.size).toBe(0)
    expect(tracker.summary()).toBe("3 Agents (1 failed, 2 replayed), 1 Script")
  })
})

describe("renderProgress", () => {
  it("formats elapsed time precisely while short and compactly once long", () => {
    expect([0, 420, 9_949, 12_300, 59_999, 185_000].map(formatElapsed)).toEqual(["0.0s", "0.4s", "9.9s", "12s", "59s", "3m05s"])
  })

  it("fits the terminal: no line wider than it, no more rows than room", () => {
    const tracker = new ProgressTracker()
    for (let i = 1; i <= 12; i++) tracker.apply(start(`span-${i}`, "trace-0", "script", "Script", { command: `step-${i}-${"x".repeat(60)}` }), 0)
    const lines = renderProgress(tracker, { now: 2_000, startedAt: 0, width: 40, height: 6 })
    expect(lines[0]).toBe("⠋ aml: running 2.0s")
    expect(lines).toHaveLength(1 + 3 + 1)
    expect(lines.at(-1)).toBe("  … 9 more")
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(39)
    expect(lines[1]).toMatch(/^ {4}2\.0s {2}Script · step-1-x+…$/)
  })
})
