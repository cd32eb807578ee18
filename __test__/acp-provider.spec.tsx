// defineAcpAgentProvider (INVENTORY PA-7, BA-0) against a scripted agent on the official
// @agentclientprotocol/sdk: multi-turn sessions with streamed chunks, the local launch
// (cwd, environment, private state directory, launch files), and the ACP trace events.
import { statSync } from "node:fs"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, FollowUp } from "@aml-jsx/sdk"

import { liveAcpSessions } from "../lib/core/native.js"
import { outline, SCRIPTED_AGENT, scriptedAcp, withoutSelfExit } from "./support/acp.js"
import { traced } from "./support/trace.js"

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-ws-")))
afterAll(() => rmSync(workspace, { force: true, recursive: true }))

describe("ACP turns", () => {
  it("runs every turn in one session and returns the final turn's text", async () => {
    const { provider } = scriptedAcp()
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent>
        first
        <FollowUp>second</FollowUp>
        <FollowUp>third</FollowUp>
      </Agent>,
    )
    expect(text).toBe("turn 3: third")
    expect(liveAcpSessions()).toBe(0)
  })

  it("adds the initial prompt prefix to the first turn only", async () => {
    const { provider } = scriptedAcp({ initialPromptPrefix: "<SYSTEM>\nBe brief.\n</SYSTEM>" })
    const runtime = new AmlRuntime({ agentProvider: provider })
    expect(await runtime.evaluate(<Agent>echo-prompt</Agent>)).toBe("<SYSTEM>\nBe brief.\n</SYSTEM>\n\necho-prompt")
    const followed = await runtime.evaluate(
      <Agent>
        hello
        <FollowUp>echo-prompt</FollowUp>
      </Agent>,
    )
    expect(followed).toBe("echo-prompt")
  })

  it("passes the response text through transformText with the session", async () => {
    const seen: unknown[] = []
    const { provider } = scriptedAcp({
      transformText: (text, session) => {
        seen.push(session)
        return text.toUpperCase()
      },
    })
    expect(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>shout</Agent>)).toBe("TURN 1: SHOUT")
    expect(seen).toEqual([{ sessionId: "scripted-session" }])
    expect(Object.isFrozen(seen[0])).toBe(true)
  })
})

describe("local launch", () => {
  it("launches in the real working directory with the launch environment and arguments", async () => {
    process.env.AML_TEST_INHERITED = "from-host"
    const { contexts, provider } = scriptedAcp(
      { args: [SCRIPTED_AGENT, "--flag", "two words"], env: { AML_TEST_LAUNCH: "launch", AML_TEST_INHERITED: "overridden" } },
      { workingDirectory: workspace },
    )
    try {
      const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent model="m-1">echo-env</Agent>)
      expect(JSON.parse(text)).toEqual({
        argv: ["--flag", "two words"],
        cwd: workspace,
        env: { AML_TEST_INHERITED: "overridden", AML_TEST_LAUNCH: "launch" },
      })
    } finally {
      delete process.env.AML_TEST_INHERITED
    }
    const [ctx] = contexts
    expect(Object.isFrozen(ctx)).toBe(true)
    expect(ctx.cwd).toBe(workspace)
    expect(ctx.inheritsProcessEnvironment).toBe(true)
    expect(ctx.mcpServers).toEqual([])
    expect(ctx.request.prompt).toBe("echo-env")
    expect(ctx.request.model).toBe("m-1")
    expect(ctx.stateDirectory.startsWith(join(realpathSync(tmpdir()), "aml-acp-")) || ctx.stateDirectory.startsWith(join(tmpdir(), "aml-acp-"))).toBe(true)
    // The private state directory is gone once the provider settled.
    expect(() => statSync(ctx.stateDirectory)).toThrow()
  })

  it("uses process.cwd() without a workingDirectory and sends it as the session cwd", async () => {
    const { provider } = scriptedAcp()
    const created = JSON.parse(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>echo-session</Agent>))
    expect(created).toEqual({ cwd: realpathSync(process.cwd()), mcpServers: [] })
  })

  it("writes launch files privately inside the state directory while the agent runs", async () => {
    const modes: Record<string, number> = {}
    const { contexts, provider } = scriptedAcp((ctx) => ({
      files: [
        { content: '{"quiet":true}', path: "agent/settings.json" },
        { content: "#!/bin/sh\nexit 0\n", executable: true, path: "bin/wrapper" },
      ],
      transformText: (text) => {
        for (const path of ["", "agent", "agent/settings.json", "bin/wrapper"]) {
          modes[path] = statSync(join(ctx.stateDirectory, path)).mode & 0o777
        }
        return text
      },
    }))
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>hi</Agent>)
    expect(modes).toEqual({ "": 0o700, agent: 0o700, "agent/settings.json": 0o600, "bin/wrapper": 0o700 })
    expect(() => statSync(contexts[0].stateDirectory)).toThrow()
  })
})

describe("ACP trace", () => {
  it("emits the session, turn and cleanup spans with the ACP events in order", async () => {
    const { provider } = scriptedAcp()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const allMetadata = traced(runtime, false)
    const content = traced(runtime, true)
    await runtime.evaluate(
      <Agent model="m-2">
        first
        <FollowUp>second</FollowUp>
      </Agent>,
    )
    const metadata = withoutSelfExit(allMetadata)
    const turn = ["event:acp.session.prompt.submitted", "event:acp.session.update", "event:acp.session.update", "event:acp.session.update", "event:acp.session.prompt.completed"]
    expect(outline(metadata)).toEqual([
      "start:Agent",
      "start:agent.session",
      "event:sandbox.process",
      "event:sandbox.process",
      "event:acp.session.created",
      "start:agent.turn",
      ...turn,
      "end:agent.turn:ok",
      "start:agent.turn",
      ...turn,
      "end:agent.turn:ok",
      "start:agent.cleanup",
      "event:sandbox.process",
      "event:sandbox.process",
      "end:agent.cleanup:ok",
      "end:agent.session:ok",
      "end:Agent:ok",
    ])
    const byName = (events: any[], name: string) => events.filter((e) => e.name === name)
    const session = byName(metadata, "agent.session")[0]
    expect(session.attributes).toEqual({ model: "m-2", provider: "scripted-acp" })
    const turns = byName(metadata, "agent.turn").filter((e) => e.type === "span.start")
    const cleanup = byName(metadata, "agent.cleanup")[0]
    const processes = byName(metadata, "sandbox.process")
    expect(processes.map((e) => e.attributes.state)).toEqual(["spawn_requested", "started", "kill_requested", "kill_completed"])
    const executionId = processes[1].attributes["execution.id"]
    expect(executionId).toMatch(/^local-process:\d+$/)
    expect(processes[0].attributes).toEqual({ state: "spawn_requested" })
    expect(processes[2].attributes).toEqual({ "execution.id": executionId, state: "kill_requested" })
    const created = byName(metadata, "acp.session.created")[0]
    expect(created.attributes).toEqual({ sessionId: "scripted-session" })
    const updates = byName(metadata, "acp.session.update")
    expect(updates.map((e) => e.attributes)).toEqual([
      { sessionId: "scripted-session", sessionUpdate: "agent_message_chunk" },
      { sessionId: "scripted-session", sessionUpdate: "tool_call", toolName: "read_file" },
      { sessionId: "scripted-session", sessionUpdate: "agent_message_chunk" },
    ]  .concat([
      { sessionId: "scripted-session", sessionUpdate: "agent_message_chunk" },
      { sessionId: "scripted-session", sessionUpdate: "tool_call", toolName: "read_file" },
      { sessionId: "scripted-session", sessionUpdate: "agent_message_chunk" },
    ]))
    const completed = byName(metadata, "acp.session.prompt.completed")
    expect(completed[0].attributes).toEqual({
      sessionId: "scripted-session",
      stopReason: "end_turn",
      usage: JSON.stringify({ inputTokens: 4, outputTokens: 2, totalTokens: 6 }),
    })
    const turnEnds = byName(metadata, "agent.turn").filter((e) => e.type === "span.end")
    expect(turnEnds[1].attributes).toMatchObject({ sessionId: "scripted-session", stopReason: "end_turn" })
    expect(JSON.parse(turnEnds[1].attributes.usage)).toEqual({ inputTokens: 4, outputTokens: 2, totalTokens: 6 })
    // Parents: process facts under the session (start-up) and cleanup spans; turn events
    // under their turn.
    const parent = (e: any) => e.spanId
    expect(parent(processes[0])).toBe(session.spanId)
    expect(parent(processes[2])).toBe(cleanup.spanId)
    expect(parent(created)).toBe(session.spanId)
    expect(parent(updates[0])).toBe(turns[0].spanId)
    expect(parent(updates[3])).toBe(turns[1].spanId)
    // Metadata only by default: no update JSON, prompt or command.
    for (const event of [...updates, ...processes, ...byName(metadata, "acp.session.prompt.submitted")]) {
      expect(Object.keys(event.attributes)).not.toContain("update")
      expect(Object.keys(event.attributes)).not.toContain("prompt")
      expect(Object.keys(event.attributes)).not.toContain("command")
    }
    // Content only for the listener that opted in.
    const contentUpdates = byName(content, "acp.session.update")
    expect(JSON.parse(contentUpdates[0].attributes.update)).toEqual({
      content: { text: "turn 1: ", type: "text" },
      sessionUpdate: "agent_message_chunk",
    })
    expect(byName(content, "acp.session.prompt.submitted")[1].attributes.prompt).toBe("second")
    expect(byName(content, "sandbox.process")[0].attributes.command).toBe(`${process.execPath} ${SCRIPTED_AGENT}`)
  })
})
