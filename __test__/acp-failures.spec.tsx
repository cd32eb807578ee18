// ACP sessions that go wrong, against the scripted agent on @agentclientprotocol/sdk:
// permission policies, cancellation honoured and ignored (the tree is killed after the grace
// period; /proc is checked), a crash mid-turn, a stderr flood, malformed frames, a 16 MiB
// line, a missing command, and the documented request and launch errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Mcp, defineAcpAgentProvider, defineMcpServer } from "@aml-jsx/sdk"

import { liveAcpSessions } from "../lib/core/native.js"
import { outline, SCRIPTED_AGENT, scriptedAcp } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { expectAllGone, exists } from "./support/processes.js"
import { traced } from "./support/trace.js"

beforeAll(() => {
  // Agents stopped here get 300 ms to honour a cancel and to exit (docs/ACP.md, settings).
  process.env.AML_ACP_CANCEL_GRACE_MS = "300"
  process.env.AML_ACP_KILL_GRACE_MS = "300"
})
afterAll(() => {
  delete process.env.AML_ACP_CANCEL_GRACE_MS
  delete process.env.AML_ACP_KILL_GRACE_MS
})

/** The provider error behind the Agent failure (`Agent "<name>" (span-1) failed`). */
async function providerError(promise: Promise<unknown>, name = "scripted-acp") {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(`Agent "${name}" (span-1) failed`)
  return error.cause
}

function run(provider: any, prompt: string, options: { signal?: AbortSignal } = {}) {
  return new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>{prompt}</Agent>, options)
}

describe("permission requests", () => {
  it.each([
    ["allow_once", "option-allow_once"],
    ["allow_always", "option-allow_always"],
    ["reject_once", "option-reject_once"],
    ["reject_always", "option-reject_always"],
  ] as const)("policy %s selects %s", async (permissionPolicy, option) => {
    const { provider } = scriptedAcp({ permissionPolicy })
    expect(await run(provider, "permission")).toBe(option)
  })

  it("defaults to reject_once", async () => {
    const { provider } = scriptedAcp({ permissionPolicy: undefined as any })
    expect(await run(provider, "permission")).toBe("option-reject_once")
  })
})

describe("cancellation", () => {
  it("sends session/cancel and rejects with the Agent wrapper of the reason once the agent stops", async () => {
    const { provider } = scriptedAcp()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    const controller = new AbortController()
    const reason = new Error("stop now")
    const pending = runtime.evaluate(<Agent>honour-cancel</Agent>, { signal: controller.signal })
    const started = () => events.some((e) => e.name === "acp.session.update")
    while (!started()) await new Promise((resolve) => setTimeout(resolve, 5))
    controller.abort(reason)
    const error = await rejection(pending)
    expect(error.message).toMatch(/^Agent "scripted-acp" \(span-\d+\) failed$/)
    expect(error.cause).toBe(reason)
    const names = outline(events)
    const cancelAt = names.indexOf("event:agent.session")
    expect(names[cancelAt + 1]).toBe("event:acp.session.cancel")
    expect(names.slice(cancelAt + 2, cancelAt + 3)).toEqual(["event:acp.session.prompt.completed"])
    const completed = events.find((e) => e.name === "acp.session.prompt.completed")
    expect(completed.attributes.stopReason).toBe("cancelled")
    expect(events.find((e) => e.name === "acp.session.cancel").attributes).toEqual({ sessionId: "scripted-session" })
    expect(liveAcpSessions()).toBe(0)
  })

  it("kills the whole tree when the agent ignores the cancel", async () => {
    const { provider } = scriptedAcp()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, true)
    const controller = new AbortController()
    const pending = runtime.evaluate(<Agent>ignore-cancel</Agent>, { signal: controller.signal })
    const update = () => events.find((e) => e.name === "acp.session.update")
    while (update() === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
    const { child, leader } = JSON.parse(JSON.parse(update().attributes.update).content.text)
    expect(exists(leader) && exists(child)).toBe(true)
    controller.abort()
    expect((await rejection(pending)).cause).toBe(controller.signal.reason)
    // Settled only after the tree (which ignores SIGTERM) was SIGKILLed and reaped.
    expect(exists(leader)).toBe(false)
    expect(exists(child)).toBe(false)
    const turnEnd = events.find((e) => e.name === "agent.turn" && e.type === "span.end")
    expect(turnEnd.status).toBe("error")
    expect(events.filter((e) => e.name === "sandbox.process").map((e) => e.attributes.state)).toEqual([
      "spawn_requested",
      "started",
      "kill_requested",
      "kill_completed",
    ])
  })

  it("an abort during start-up closes the session and rejects with the wrapped reason", async () => {
    const { provider } = scriptedAcp({ args: ["-e", "setInterval(() => {}, 1000)"] })
    const controller = new AbortController()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    const pending = runtime.evaluate(<Agent>never</Agent>, { signal: controller.signal })
    while (!events.some((e) => e.attributes?.state === "started")) await new Promise((resolve) => setTimeout(resolve, 5))
    const leader = Number(events.find((e) => e.attributes?.state === "started").attributes["execution.id"].split(":")[1])
    controller.abort()
    expect((await rejection(pending)).cause).toBe(controller.signal.reason)
    expect(exists(leader)).toBe(false)
    expect(liveAcpSessions()).toBe(0)
  })
})

describe("agent failures", () => {
  it("a crash mid-turn reports the exit code and the stderr tail", async () => {
    const { provider } = scriptedAcp()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const events = traced(runtime, false)
    const cause = await providerError(runtime.evaluate(<Agent>crash</Agent>))
    expect(cause.constructor).toBe(Error)
    expect(cause.message).toBe("ACP Agent process exited with code 9 during a turn: scripted agent: simulated crash")
    const exited = events.find((e) => e.name === "sandbox.process" && e.attributes.state === "exited")
    expect(exited.attributes.exitCode).toBe(9)
    expect(liveAcpSessions()).toBe(0)
  })

  it("survives a stderr flood and keeps memory bounded", async () => {
    const { provider } = scriptedAcp()
    expect(await run(provider, "stderr-flood")).toBe("flooded")
  })

  it("ignores malformed frames, unknown ids and updates of the wrong type", async () => {
    const { provider } = scriptedAcp()
    expect(await run(provider, "malformed")).toBe("still here")
  })

  it("fails the turn on a 16 MiB line without buffering it", async () => {
    const { provider } = scriptedAcp()
    const cause = await providerError(run(provider, "huge-line"))
    expect(cause.message).toBe("ACP Agent sent a message line longer than 8388608 bytes")
  })

  it("names a command that is not installed", async () => {
    const { provider } = scriptedAcp({ command: "aml-missing-acp-agent" })
    const cause = await providerError(run(provider, "hi"))
    expect(cause.constructor).toBe(Error)
    expect(cause.message).toBe('ACP Agent command "aml-missing-acp-agent" was not found')
  })

  it("authenticates with the launch's method and reports the agent's refusal", async () => {
    const { provider } = scriptedAcp({ authenticationMethodId: "scripted-key" })
    expect(await run(provider, "ok")).toBe("turn 1: ok")
    const { provider: refused } = scriptedAcp({ authenticationMethodId: "oauth" })
    const cause = await providerError(run(refused, "ok"))
    expect(cause.message).toBe("Internal error")
  })
})

describe("MCP servers", () => {
  const docs = defineMcpServer({ name: "docs", transport: { headers: { authorization: "t" }, type: "streamable-http", url: "http://127.0.0.1:9/mcp" } })
  const files = defineMcpServer({ name: "files", transport: { args: ["--root", "."], command: "mcp-files", env: { A: "1" }, type: "stdio" } })
  const placed = defineMcpServer({ name: "placed", transport: { command: "mcp-files", cwd: "/srv", type: "stdio" } })

  it("maps configured servers to ACP descriptors in session/new", async () => {
    const { contexts, provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
    const text = await run(provider, (
      <>
        <Mcp use={files} />
        <Mcp use={docs} />
        echo-session
      </>
    ) as any)
    const expected = [
      { args: ["--root", "."], command: "mcp-files", env: [{ name: "A", value: "1" }], name: "files" },
      { headers: [{ name: "authorization", value: "t" }], name: "docs", type: "http", url: "http://127.0.0.1:9/mcp" },
    ]
    expect(JSON.parse(text).mcpServers).toEqual(expected)
    expect(contexts[0].mcpServers).toEqual(expected)
  })

  it("requires the agent to advertise HTTP MCP", async () => {
    const { provider } = scriptedAcp()
    const cause = await providerError(run(provider, (<><Mcp use={docs} />x</>) as any))
    expect(cause.constructor).toBe(Error)
    expect(cause.message).toBe('ACP Agent does not advertise HTTP MCP support required by server "docs"')
  })

  it("rejects named servers and stdio servers with a cwd", async () => {
    const { contexts, provider } = scriptedAcp()
    const named = await providerError(run(provider, (<><Mcp name="github" />x</>) as any))
    expect(named.constructor).toBe(TypeError)
    expect(named.message).toBe('Agent provider "scripted-acp" cannot verify named MCP server "github"')
    const cwd = await providerError(run(provider, (<><Mcp use={placed} />x</>) as any))
    expect(cwd.constructor).toBe(TypeError)
    expect(cwd.message).toBe('ACP stdio MCP server "placed" cannot preserve its configured cwd because ACP has no stdio cwd field')
    expect(contexts).toEqual([])
  })

  it("accepts named servers the profile vouches for", async () => {
    const provider = defineAcpAgentProvider({
      createLaunch: () => ({ args: [SCRIPTED_AGENT], command: process.execPath, permissionPolicy: "reject_once" }),
      name: "vouching",
      supportsNamedMcpServer: (name) => name === "github",
      workingDirectory: undefined,
    })
    const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Mcp name="github" />echo-session</Agent>)
    expect(JSON.parse(text).mcpServers).toEqual([])
  })
})

describe("start-up deadline", () => {
  it("fails an agent that never answers initialize, naming the step, and kills its tree", async () => {
    const pids: number[] = []
    const silent = "process.stdin.resume()"
    const { provider } = scriptedAcp({ args: ["-e", silent], startupTimeoutMs: 300 })
    const runtime = new AmlRuntime({ agentProvider: provider })
    runtime.on("trace", (event: any) => {
      const id = event.attributes?.["execution.id"]
      if (typeof id === "string" && id.startsWith("local-process:")) pids.push(Number(id.slice("local-process:".length)))
    })
    const cause = await providerError(runtime.evaluate(<Agent>x</Agent>))
    expect(cause.constructor).toBe(Error)
    expect(cause.message).toBe("ACP Agent did not answer initialize within 300 ms")
    expect(pids.length).toBeGreaterThan(0)
    await expectAllGone(pids)
    expect(liveAcpSessions()).toBe(0)
  })
})

describe("launch and profile errors", () => {
  it.each([
    [{ path: "../escape", content: "" }, "ACP Agent launch file path must remain inside its state directory"],
    [{ path: "/abs", content: "" }, "ACP Agent launch file path must be a normalized relative path"],
    [{ path: "a/./b", content: "" }, "ACP Agent launch file path must be a normalized relative path"],
  ])("refuses launch file %j", async (file, message) => {
    const { contexts, provider } = scriptedAcp({ files: [{ content: "ok", path: "fine.txt" }, file] })
    const cause = await providerError(run(provider, "x"))
    expect(cause.constructor).toBe(TypeError)
    expect(cause.message).toBe(message)
    const { statSync } = await import("node:fs")
    expect(() => statSync(contexts[0].stateDirectory)).toThrow()
  })

  it.each([
    [null, "ACP Agent launch must be an object"],
    [{ command: "" }, "ACP Agent launch command must be a non-empty string"],
    [{ command: "x", args: [1] }, "ACP Agent launch args must be an array of strings without null bytes"],
    [{ command: "x", env: { A: 1 } }, "ACP Agent launch env must be an object of strings"],
    [{ command: "x", permissionPolicy: "always" }, 'ACP Agent launch permissionPolicy must be "allow_once", "allow_always", "reject_once" or "reject_always"'],
    [{ command: "x", configuration: [{ category: "model" }] }, "ACP Agent launch configuration must contain { category, value } or { id, value } entries"],
    [{ command: "x", files: {} }, "ACP Agent launch files must be an array"],
    [{ command: "x", transformText: "upper" }, "ACP Agent launch transformText must be a function"],
    [{ command: "x", startupTimeoutMs: 0 }, "ACP Agent launch startupTimeoutMs must be a positive integer"],
    [{ command: "x", startupTimeoutMs: 1.5 }, "ACP Agent launch startupTimeoutMs must be a positive integer"],
  ])("refuses launch %j", async (launch, message) => {
    const provider = defineAcpAgentProvider({ createLaunch: () => launch as any, name: "bad-launch", workingDirectory: undefined })
    const cause = await providerError(run(provider, "x"), "bad-launch")
    expect(cause.constructor).toBe(TypeError)
    expect(cause.message).toBe(message)
  })

  it.each([
    [null, "ACP Agent profile must be an object"],
    [{ createLaunch() {}, name: " x" }, "ACP Agent profile name must be a non-empty normalized string"],
    [{ createLaunch() {}, name: "x", workingDirectory: "" }, "ACP Agent profile workingDirectory must be a non-empty normalized string"],
    [{ name: "x" }, "ACP Agent profile createLaunch must be a function"],
    [{ createLaunch() {}, name: "x", supportsNamedMcpServer: true }, "ACP Agent profile supportsNamedMcpServer must be a function when provided"],
  ])("refuses profile %j", (profile, message) => {
    let thrown: any
    try {
      defineAcpAgentProvider(profile as any)
    } catch (error) {
      thrown = error
    }
    expect(thrown?.constructor).toBe(TypeError)
    expect(thrown?.message).toBe(message)
  })

  it("returns a frozen provider that claims matching Sandboxes only", () => {
    const { provider } = scriptedAcp()
    expect(Object.isFrozen(provider)).toBe(true)
    expect(provider.name).toBe("scripted-acp")
    expect(typeof provider.supportsSandbox).toBe("function")
  })

  it("rejects a pre-aborted signal with its reason before launching", async () => {
    const { contexts, provider } = scriptedAcp()
    const reason = new Error("already")
    const context: any = { events: {}, signal: AbortSignal.abort(reason), trace: { runId: "r", spanId: "s" } }
    await expect(provider.run({ mcpServers: [], permissions: {}, prompt: "x", system: "", tools: [] } as any, context)).rejects.toBe(reason)
    expect(contexts).toEqual([])
  })
})
