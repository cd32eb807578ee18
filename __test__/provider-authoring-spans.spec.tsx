// AbstractAgentProvider end to end (INVENTORY PA-3, §2.3, §2.4): a JS subclass run by
// AmlRuntime and <Agent>, the agent.session / agent.turn / agent.cleanup spans and their
// order, content policy, failure statuses and the cancellation point event.
import { describe, expect, it } from "vitest"

import {
  AbstractAgentProvider,
  Agent,
  AmlRuntime,
  EvaluationError,
  FollowUp,
  defineAgentProvider,
  executeAgentProviderSession,
  type AgentExecutionContext,
  type AgentProviderSession,
  type AgentProviderTurn,
  type AgentRequest,
} from "@aml-jsx/sdk"
import { createAgentExecutionContext } from "@aml-jsx/sdk/testing"
import { rejection } from "./support/errors.js"

type Hooks = Partial<AgentProviderSession> & { open?: (request: AgentRequest) => Promise<void> }

class ScriptedProvider extends AbstractAgentProvider<"scripted"> {
  readonly log: string[] = []
  readonly seen: { context: AgentExecutionContext; turn: AgentProviderTurn }[] = []
  constructor(readonly hooks: Hooks = {}) {
    super("scripted")
  }
  protected async openSession(request: AgentRequest, context: AgentExecutionContext): Promise<AgentProviderSession> {
    this.log.push(`open:${request.prompt}`)
    await this.hooks.open?.(request)
    const { log, seen, hooks } = this
    return {
      abort: hooks.abort ?? (async () => void log.push("abort")),
      close: hooks.close ?? (async () => void log.push("close")),
      async runTurn(turn, ctx) {
        expect(ctx).toBe(context)
        seen.push({ context: ctx, turn })
        log.push(`turn:${turn.prompt}`)
        return hooks.runTurn ? hooks.runTurn(turn, ctx) : { text: `reply to ${turn.prompt}` }
      },
    }
  }
}

function recorder(captureContent: boolean) {
  const events: any[] = []
  const sink: any = (event: any) => void events.push(event)
  sink.captureContent = captureContent
  return { events, sink }
}

/** `start:name` / `end:name:status` / `event:name` for agent-kind spans and point events. */
const outline = (events: any[]) =>
  events
    .filter((e) => e.kind === "agent" || e.type === "event")
    .map((e) => (e.type === "span.start" ? `start:${e.name}` : e.type === "span.end" ? `end:${e.name}:${e.status}` : `event:${e.name}`))

const byName = (events: any[], type: string, name: string) => events.filter((e) => e.type === type && e.name === name)

describe("AbstractAgentProvider under AmlRuntime", () => {
  it("runs a subclass through <Agent> with follow-ups and returns the final turn's text", async () => {
    const provider = new ScriptedProvider()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const text = await runtime.evaluate(
      <Agent>
        hello
        <FollowUp>again</FollowUp>
      </Agent>,
    )
    expect(text).toBe("reply to again")
    expect(provider.log).toEqual(["open:hello", "turn:hello", "turn:again", "close"])
    expect(provider.seen.map((s) => s.turn)).toEqual([
      { index: 0, isFinal: false, prompt: "hello" },
      { index: 1, isFinal: true, prompt: "again" },
    ])
  })

  it("also works as an explicit provider prop and after defineAgentProvider", async () => {
    const provider = defineAgentProvider(new ScriptedProvider())
    const text = await new AmlRuntime().evaluate(<Agent provider={provider}>solo</Agent>)
    expect(text).toBe("reply to solo")
  })

  it("nests session → turn 1 → turn 2 → cleanup, each closing before the next opens", async () => {
    const { events, sink } = recorder(true)
    const runtime = new AmlRuntime({ agentProvider: new ScriptedProvider(), trace: sink })
    await runtime.evaluate(
      <Agent model="m-1">
        hello
        <FollowUp>again</FollowUp>
      </Agent>,
    )
    expect(outline(events)).toEqual([
      "start:Agent",
      "start:agent.session",
      "start:agent.turn",
      "end:agent.turn:ok",
      "start:agent.turn",
      "end:agent.turn:ok",
      "start:agent.cleanup",
      "end:agent.cleanup:ok",
      "end:agent.session:ok",
      "end:Agent:ok",
    ])
    const agent = byName(events, "span.start", "Agent")[0]
    const [session] = byName(events, "span.start", "agent.session")
    expect(session.parentSpanId).toBe(agent.spanId)
    expect({ ...session.attributes }).toEqual({ model: "m-1", provider: "scripted" })
    const turnStarts = byName(events, "span.start", "agent.turn")
    expect(turnStarts.map((e) => ({ ...e.attributes }))).toEqual([
      { index: 1, kind: "initial", prompt: "hello" },
      { index: 2, kind: "follow-up", prompt: "again" },
    ])
    const [cleanup] = byName(events, "span.start", "agent.cleanup")
    for (const child of [...turnStarts, cleanup]) expect(child.parentSpanId).toBe(session.spanId)
    expect(new Set([session, ...turnStarts, cleanup].map((e) => e.spanId)).size).toBe(4)
    expect(session.spanId).toMatch(/^trace-\d+$/)
  })

  it("keeps the turn prompt out of metadata-only sinks and omits model when unset", async () => {
    const { events, sink } = recorder(false)
    await new AmlRuntime({ agentProvider: new ScriptedProvider(), trace: sink }).evaluate(<Agent>secret</Agent>)
    expect({ ...byName(events, "span.start", "agent.session")[0].attributes }).toEqual({ provider: "scripted" })
    expect({ ...byName(events, "span.start", "agent.turn")[0].attributes }).toEqual({ index: 1, kind: "initial" })
  })

  it("fails the turn and session spans, still cleans up, and the Agent wraps the error", async () => {
    const failure = new TypeError("turn broke")
    const provider = new ScriptedProvider({
      runTurn: async () => {
        throw failure
      },
    })
    const { events, sink } = recorder(false)
    const error = await rejection(new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate(<Agent>x</Agent>))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('Agent "scripted" (span-1) failed')
    expect(error.cause).toBe(failure)
    expect(outline(events)).toEqual([
      "start:Agent",
      "start:agent.session",
      "start:agent.turn",
      "end:agent.turn:error",
      "start:agent.cleanup",
      "end:agent.cleanup:ok",
      "end:agent.session:error",
      "end:Agent:error",
    ])
    expect(byName(events, "span.end", "agent.turn")[0].attributes["error.type"]).toBe("TypeError")
    expect(provider.log).toEqual(["open:x", "turn:x", "close"])
  })

  it("fails the session span without cleanup when openSession rejects", async () => {
    const failure = new Error("cannot open")
    const provider = new ScriptedProvider({ open: async () => Promise.reject(failure) })
    const { events, sink } = recorder(false)
    const error = await rejection(new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate(<Agent>x</Agent>))
    expect(error.cause).toBe(failure)
    expect(outline(events)).toEqual(["start:Agent", "start:agent.session", "end:agent.session:error", "end:Agent:error"])
  })

  it("emits the cancellation point event on the session span before calling abort()", async () => {
    const controller = new AbortController()
    const reason = new Error("user cancelled")
    let markClosed!: () => void
    const closed = new Promise<void>((resolve) => (markClosed = resolve))
    const { events, sink } = recorder(false)
    const provider: ScriptedProvider = new ScriptedProvider({
      close: async () => {
        provider.log.push("close")
        markClosed()
      },
      runTurn: () => {
        controller.abort(reason)
        return Promise.reject(new Error("interrupted"))
      },
      abort: async () => {
        provider.log.push(`abort after ${events.filter((e) => e.type === "event").length} event(s)`)
      },
    })
    const runtime = new AmlRuntime({ agentProvider: provider, trace: sink })
    expect((await rejection(runtime.evaluate(<Agent>x</Agent>, { signal: controller.signal }))).cause).toBe(reason)
    await closed
    await new Promise((resolve) => setImmediate(resolve))
    expect(provider.log).toEqual(["open:x", "turn:x", "abort after 1 event(s)", "close"])
    const [point] = events.filter((e) => e.type === "event")
    expect(point.name).toBe("agent.session")
    expect({ ...point.attributes }).toEqual({ state: "cancellation_requested" })
    expect(point.spanId).toBe(byName(events, "span.start", "agent.session")[0].spanId)
    // Only the session subtree: the runtime settles the Agent on abort without waiting for
    // the provider's cleanup, so where "end:Agent" falls is not this helper's contract.
    expect(outline(events).filter((line) => !line.endsWith("Agent") && !line.includes(":Agent:"))).toEqual([
      "start:agent.session",
      "start:agent.turn",
      "event:agent.session",
      "end:agent.turn:error",
      "start:agent.cleanup",
      "end:agent.cleanup:ok",
      "end:agent.session:error",
    ])
  })
})

describe("executeAgentProviderSession in a direct provider", () => {
  it("opens its own agent.session span so turns and cleanup keep their parent", async () => {
    const { events, sink } = recorder(false)
    const provider = defineAgentProvider({
      name: "direct",
      async run(request, context) {
        const session = { close: async () => {}, runTurn: async () => ({ text: `ran ${request.prompt}` }) }
        const turns = [{ index: 0, isFinal: true, prompt: request.prompt }]
        return executeAgentProviderSession(session, turns, context, "direct")
      },
    })
    await expect(new AmlRuntime({ agentProvider: provider, trace: sink }).evaluate(<Agent>go</Agent>)).resolves.toBe(
      "ran go",
    )
    expect(outline(events).slice(1, -1)).toEqual([
      "start:agent.session",
      "start:agent.turn",
      "end:agent.turn:ok",
      "start:agent.cleanup",
      "end:agent.cleanup:ok",
      "end:agent.session:ok",
    ])
    const [session] = byName(events, "span.start", "agent.session")
    expect({ ...session.attributes }).toEqual({ provider: "direct" })
    expect(byName(events, "span.start", "agent.turn")[0].parentSpanId).toBe(session.spanId)
  })
})

describe("AbstractAgentProvider outside an evaluation", () => {
  it("fails closed on Sandbox support unless the subclass opts in", () => {
    expect(new ScriptedProvider().supportsSandbox({} as never)).toBe(false)
    class Opted extends ScriptedProvider {
      override supportsSandbox(_sandbox: unknown) {
        return true
      }
    }
    expect(new Opted().supportsSandbox({} as never)).toBe(true)
  })

  it("runs with a test context and emits nothing", async () => {
    const provider = new ScriptedProvider()
    const request = { followUps: ["b"], prompt: "a" } as unknown as AgentRequest
    await expect(provider.run(request, createAgentExecutionContext())).resolves.toEqual({ text: "reply to b" })
    expect(provider.log).toEqual(["open:a", "turn:a", "turn:b", "close"])
  })

  it("rejects a pre-aborted signal with its reason before opening a session", async () => {
    const provider = new ScriptedProvider()
    const controller = new AbortController()
    const reason = new Error("pre")
    controller.abort(reason)
    const context = createAgentExecutionContext({ signal: controller.signal })
    expect(await rejection(provider.run({ prompt: "a" } as AgentRequest, context))).toBe(reason)
    expect(provider.log).toEqual([])
  })

  it("validates follow-ups before the abort check", async () => {
    const controller = new AbortController()
    controller.abort(new Error("pre"))
    const context = createAgentExecutionContext({ signal: controller.signal })
    const error = await rejection(new ScriptedProvider().run({ followUps: "b", prompt: "a" } as never, context))
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe('Agent provider "scripted" followUps must be an array')
  })
})
