// ACP Agents inside <Sandbox> (INVENTORY BA-0 "Launch, Sandbox mode"): the scripted ACP
// agent launched through the Local Sandbox's runtime (exec for pwd/state/files, spawn for the
// agent), with the guest cwd, the launch environment and the Sandbox's access policy
// honoured, the state directory removed, and the process tree reaped on finish and on
// cancellation. Wrapped providers drive the documented Sandbox launch errors.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Sandbox, Tool, defineTool, localSandbox } from "@aml-jsx/sdk"

import { liveAcpBridges, liveAcpSessions } from "../lib/core/native.js"
import { outline, scriptedAcp, withoutSelfExit, type LaunchOverrides } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { exists } from "./support/processes.js"
import { traced } from "./support/trace.js"

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-sandbox-")))
mkdirSync(join(workspace, "repo", "pkg"), { recursive: true })
beforeAll(() => {
  // Agents stopped here get 300 ms to honour a cancel and to exit (docs/ACP.md, settings).
  process.env.AML_ACP_CANCEL_GRACE_MS = "300"
  process.env.AML_ACP_KILL_GRACE_MS = "300"
})
afterAll(() => {
  delete process.env.AML_ACP_CANCEL_GRACE_MS
  delete process.env.AML_ACP_KILL_GRACE_MS
  rmSync(workspace, { force: true, recursive: true })
})

const echo = defineTool({
  description: "Echoes",
  execute: ({ text }: { text: string }) => `echo: ${text}`,
  input: z.object({ text: z.string() }),
  name: "echo",
})

/** Wraps the Local Sandbox: `exec` answers come from `fake` when it returns one. */
function wrappedSandbox(fake: (command: string, args: string[]) => any, kind = "local") {
  const local = localSandbox({ workspace })
  return {
    name: "wrapped",
    async acquire(request: any) {
      const lease = await local.acquire(request)
      const runtime = lease.runtime
      return {
        handle: { ...lease.handle, kind },
        id: lease.id,
        release: () => lease.release(),
        runtime: {
          access: runtime.access,
          cwd: runtime.cwd,
          exec: async (command: string, args: string[] = [], options?: any) =>
            (await fake(command, args)) ?? runtime.exec(command, args, options),
          root: runtime.root,
          spawn: (command: string, args?: string[], options?: any) => runtime.spawn(command, args, options),
        },
      }
    },
  }
}

function inSandbox(text: string, overrides: LaunchOverrides = {}, options: { access?: string; sandbox?: any; children?: any; signal?: AbortSignal } = {}) {
  const { contexts, provider } = scriptedAcp(overrides)
  const runtime = new AmlRuntime({ agentProvider: provider, sandboxProvider: options.sandbox ?? localSandbox({ workspace }) })
  const events = traced(runtime, true)
  const result = runtime.evaluate(
    <Sandbox access={(options.access ?? "read-write") as any} cwd="pkg" root="repo">
      <Agent>
        {options.children}
        {text}
      </Agent>
    </Sandbox>,
    { signal: options.signal },
  )
  return { contexts, events, result }
}

describe("ACP Agent Sandbox launch (Local Sandbox)", () => {
  it("spawns through the Sandbox runtime in the guest cwd with the launch environment and files", async () => {
    const files = [
      { content: "{\"a\":1}", path: "agent/settings.json" },
      { content: "#!/bin/sh\n", executable: true, path: "bin/run" },
    ]
    const probe = `read-files ${JSON.stringify(["agent/settings.json", "bin/run"])}`
    const launch: LaunchOverrides = (ctx) => ({ env: { AML_TEST_MODE: "sandboxed", HOME: ctx.stateDirectory }, files })
    const { contexts, events, result } = inSandbox(probe, launch)
    const seen = JSON.parse(await result)
    expect(seen).toEqual({
      "agent/settings.json": { content: '{"a":1}', mode: "600" },
      "bin/run": { content: "#!/bin/sh\n", mode: "700" },
    })
    const [ctx] = contexts
    expect(ctx!.cwd).toBe(join(workspace, "repo", "pkg"))
    expect(ctx!.inheritsProcessEnvironment).toBe(false)
    expect(ctx!.stateDirectory).toMatch(/^\/tmp\/aml-acp-[0-9a-f-]{36}$/)
    // The guest state directory is removed after the session.
    expect(existsSync(ctx!.stateDirectory)).toBe(false)
    const env = JSON.parse(await inSandbox("echo-env", { env: { AML_TEST_MODE: "sandboxed" } }).result)
    expect(env.cwd).toBe(join(workspace, "repo", "pkg"))
    expect(env.env).toMatchObject({ AML_TEST_MODE: "sandboxed" })
    const session = JSON.parse(await inSandbox("echo-session").result)
    expect(session.cwd).toBe(join(workspace, "repo", "pkg"))
    const processes = withoutSelfExit(events).filter((e) => e.name === "sandbox.process")
    expect(processes.map((e) => e.attributes.state)).toEqual(["spawn_requested", "started", "kill_requested", "kill_completed"])
    expect(processes[1].attributes["execution.id"]).toMatch(/^local-process:\d+$/)
    expect(processes[0].sensitive ?? processes[0].content ?? processes[0].attributes.command).toBeDefined()
    expect(outline(events).slice(0, 3)).toEqual(["start:Agent", "start:agent.session", "event:sandbox.process"])
    expect(liveAcpSessions()).toBe(0)
  })

  it("runs turns and serves JS Tools over the bridge to the sandboxed agent", async () => {
    const { result } = inSandbox('call-tool echo {"text":"hi"}', { env: { AML_TEST_MCP_HTTP: "1" } }, { children: <Tool use={echo} /> })
    const seen = JSON.parse(await result)
    expect(seen.tools).toEqual(["echo"])
    expect(seen.result.content[0].text).toBe("echo: hi")
    expect(await inSandbox("plain words").result).toBe("turn 1: plain words")
    expect(liveAcpBridges()).toBe(0)
  })

  it("honours the Sandbox access policy: the Local Sandbox refuses to spawn under read-only", async () => {
    const error = await rejection(inSandbox("x", {}, { access: "read-only" }).result)
    expect(error.cause.message).toBe("Local Sandbox cannot execute under read-only access because host processes cannot enforce it")
  })

  it("reaps the agent's process tree when the Agent finishes", async () => {
    const { child, leader } = JSON.parse(await inSandbox("spawn-child").result)
    expect(typeof child).toBe("number")
    // Settled only after cleanup killed the whole group (the sleeping grandchild too) and reaped it.
    expect(exists(leader)).toBe(false)
    expect(exists(child)).toBe(false)
    expect(liveAcpSessions()).toBe(0)
  })

  it("on cancellation sends session/cancel, then kills and reaps the tree before rejecting", async () => {
    const controller = new AbortController()
    const { events, result } = inSandbox("ignore-cancel", {}, { signal: controller.signal })
    const update = () => events.find((e) => e.name === "acp.session.update")
    while (update() === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
    const { child, leader } = JSON.parse(JSON.parse(update().attributes.update).content.text)
    expect(exists(leader) && exists(child)).toBe(true)
    controller.abort()
    expect((await rejection(result)).cause).toBe(controller.signal.reason)
    expect(exists(leader)).toBe(false)
    expect(exists(child)).toBe(false)
    const names = outline(events)
    expect(names.indexOf("event:acp.session.cancel")).toBeGreaterThan(names.indexOf("event:agent.session"))
    expect(events.filter((e) => e.name === "sandbox.process").map((e) => e.attributes.state)).toEqual([
      "spawn_requested",
      "started",
      "kill_requested",
      "kill_completed",
    ])
    expect(liveAcpSessions()).toBe(0)
  })

  it("reports a crash during a turn with its exit code and stderr tail", async () => {
    const error = await rejection(inSandbox("crash").result)
    expect(error.cause.message).toBe("ACP Agent process exited with code 9 during a turn: scripted agent: simulated crash")
  })

  it("names a command the Sandbox cannot find", async () => {
    const error = await rejection(inSandbox("x", { args: [], command: "aml-missing-agent" }).result)
    expect(error.cause.message).toBe('ACP Agent command "aml-missing-agent" was not found')
    expect(error.cause.cause.code).toBe("ENOENT")
  })
})

describe("ACP Agent Sandbox launch errors", () => {
  const failing = (match: string, answer: any, kind?: string) =>
    wrappedSandbox((command, args) => (command === match || args.includes(match) ? answer : undefined), kind)

  it("the guest cwd must resolve", async () => {
    let error = await rejection(inSandbox("x", {}, { sandbox: failing("pwd", { exitCode: 1, stderr: "no such dir\n", stdout: "" }) }).result)
    expect(error.cause.message).toBe('Agent provider "scripted-acp" could not resolve its Sandbox cwd: no such dir')
    error = await rejection(inSandbox("x", {}, { sandbox: failing("pwd", { exitCode: 0, stderr: "", stdout: "  \n" }) }).result)
    expect(error.cause.message).toBe('Agent provider "scripted-acp" Sandbox cwd resolved to an empty path')
  })

  it("the state directory must be creatable and its removal failure is a resource cleanup failure", async () => {
    let error = await rejection(inSandbox("x", {}, { sandbox: failing("mkdir", { exitCode: 1, stderr: "read-only fs", stdout: "" }) }).result)
    expect(error.cause.message).toBe('Agent provider "scripted-acp" could not prepare writable state: read-only fs')
    const refused: string[] = []
    const refusingRm = wrappedSandbox((command, args) => {
      if (command !== "rm") return undefined
      refused.push(args[args.length - 1])
      return { exitCode: 1, stderr: "busy", stdout: "" }
    })
    error = await rejection(inSandbox("x", {}, { sandbox: refusingRm }).result)
    expect(error.cause).toBeInstanceOf(AggregateError)
    expect(error.cause.message).toBe("ACP invocation resource cleanup failed")
    expect(error.cause.errors.map((e: Error) => e.message)).toEqual(['Agent provider "scripted-acp" state cleanup failed: busy'])
    // The refused removal left the state directory (this guest's paths are host paths): the
    // test removes what it made the provider leave.
    expect(refused).toHaveLength(1)
    expect(existsSync(refused[0])).toBe(true)
    rmSync(refused[0], { force: true, recursive: true })
  })

  it("checks materialized files before writing any, and reports each failing step", async () => {
    const cases: [any, any, string][] = [
      [{ content: "x", path: "../out" }, TypeError, "Sandbox materialized file path must remain inside its root"],
      [{ content: "x", path: "/abs" }, TypeError, "Sandbox materialized file path must be a normalized relative path"],
      [{ content: "x", path: "a//b" }, TypeError, "Sandbox materialized file path must be a normalized relative path"],
      [{ content: "a\0b", path: "f" }, TypeError, "Sandbox materialized text file cannot contain a null byte"],
    ]
    for (const [file, type, message] of cases) {
      const error = await rejection(inSandbox("x", { files: [file] }).result)
      expect(error.cause.constructor).toBe(type)
      expect(error.cause.message).toBe(message)
    }
    const steps: [string, string][] = [
      ["mkdir", "Could not prepare Sandbox file directory: denied"],
      ["chmod", "Could not set Sandbox file permissions: denied"],
    ]
    for (const [step, message] of steps) {
      const matches = (command: string, args: string[]) =>
        step === "mkdir" ? command === "sh" && args[1]!.includes("mkdir -p") : command === step
      const sandbox = wrappedSandbox((command, args) =>
        matches(command, args) ? { exitCode: 1, stderr: "denied", stdout: "" } : undefined,
      )
      const error = await rejection(inSandbox("x", { files: [{ content: "x", path: "d/f" }] }, { sandbox }).result)
      expect(error.cause.message).toBe(message)
    }
    const writes = wrappedSandbox((command, args) =>
      command === "sh" && args[1]!.includes("printf") ? { exitCode: 1, stderr: "no space", stdout: "" } : undefined,
    )
    const error = await rejection(inSandbox("x", { files: [{ content: "x", path: "f" }] }, { sandbox: writes }).result)
    expect(error.cause.message).toBe("Could not materialize Sandbox file: no space")
  })

  it("a guest that is not this host gets the bridge through the Sandbox MCP relay", async () => {
    const spawned: string[] = []
    const local = wrappedSandbox(() => undefined, "docker")
    const sandbox = {
      name: "recording",
      async acquire(request: any) {
        const lease = await local.acquire(request)
        const spawn = lease.runtime.spawn
        lease.runtime.spawn = (command: string, args?: string[], options?: any) => {
          spawned.push(command)
          return spawn(command, args, options)
        }
        return lease
      },
    }
    const { result } = inSandbox('call-tool echo {"text":"hi"}', { env: { AML_TEST_MCP_HTTP: "1" } }, { children: <Tool use={echo} />, sandbox })
    expect(JSON.parse(await result).result.content[0].text).toBe("echo: hi")
    expect(spawned).toEqual(["node", process.execPath])
    // Without Tools or structured output no bridge (and no relay) is needed.
    spawned.length = 0
    expect(await inSandbox("plain", {}, { sandbox }).result).toBe("turn 1: plain")
    expect(spawned).toEqual([process.execPath])
  })
})
