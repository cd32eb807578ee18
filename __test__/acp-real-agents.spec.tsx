// Real coding agents end to end, offline (DESIGN.md §4): the agents are exact-pinned
// devDependencies, driven through the built-in profiles against a scripted model server on
// 127.0.0.1 (support/model-server.ts). Each run must call one AML Tool through the MCP bridge
// and submit a structured result that the runtime validates; the cancellation run aborts a
// turn whose model request never answers and checks that the agent's process tree is gone.
// An agent that cannot run here is skipped with the reason in its title (visible in the
// report as skipped, never as passed).
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Sandbox, Tool, codexAgent, copilotAgent, defineTool, evaluate, localSandbox, opencodeAgent, piAgent } from "@aml-jsx/sdk"

import { liveAcpBridges, liveAcpSessions } from "../lib/core/native.js"
import { rejection } from "./support/errors.js"
import { STALL, startModelServer, type ModelServer } from "./support/model-server.js"
import { exists } from "./support/processes.js"
import { traced } from "./support/trace.js"
import { OPENCODE_OFFLINE_ENV, localOpencodeConfig } from "./support/opencode-local.js"

const work = realpathSync(mkdtempSync(join(tmpdir(), "aml-real-agents-")))
afterAll(() => rmSync(work, { force: true, recursive: true }))

const Result = z.object({ echoed: z.string() })
const calls: string[] = []
const echo = defineTool({
  description: "Echo the given text back, prefixed with 'echo: '.",
  execute: ({ text }: { text: string }) => {
    calls.push(text)
    return `echo: ${text}`
  },
  input: z.object({ text: z.string() }),
  name: "echo",
})

/** One structured run: Tool call over the bridge, then a validated submission. */
async function structuredRun(provider: any) {
  calls.length = 0
  const runtime = new AmlRuntime({ agentProvider: provider })
  const events = traced(runtime, false)
  const Probe = async () =>
    JSON.stringify(
      await evaluate(
        <Agent>
          <Tool use={echo} />
          Call the echo tool with the text "offline", then submit its exact result as echoed.
        </Agent>,
        Result,
      ),
    )
  const value = JSON.parse(await runtime.evaluate(<Probe />))
  return { events, value }
}

function leaderPid(events: any[]) {
  const started = events.find((e) => e.name === "sandbox.process" && e.attributes.state === "started")
  return Number(String(started.attributes["execution.id"]).split(":")[1])
}

async function cancelledRun(provider: any, server: ModelServer) {
  const controller = new AbortController()
  const runtime = new AmlRuntime({ agentProvider: provider })
  const events = traced(runtime, false)
  const pending = runtime.evaluate(<Agent>{`${STALL}: wait for the model.`}</Agent>, { signal: controller.signal })
  // Hang guard only: the model request reaching the server is the order we wait for.
  const deadline = Date.now() + 120_000
  while (server.stalled() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(server.stalled()).toBe(1)
  const pid = leaderPid(events)
  expect(exists(pid)).toBe(true)
  controller.abort()
  expect((await rejection(pending)).cause).toBe(controller.signal.reason)
  expect(exists(pid)).toBe(false)
  const names = events.filter((e) => e.type === "event").map((e) => e.name)
  expect(names).toContain("acp.session.cancel")
  expect(events.filter((e) => e.name === "sandbox.process").map((e) => e.attributes.state)).toContain("kill_completed")
}

function expectStructured(result: { events: any[]; value: any }, server: ModelServer) {
  expect(result.value).toEqual({ echoed: "echo: offline" })
  expect(calls).toEqual(["offline"])
  const outputs = result.events.filter((e) => e.name === "agent.output").map((e) => e.attributes.status)
  expect(outputs).toEqual(["accepted"])
  expect(result.events.some((e) => e.type === "span.start" && e.kind === "tool" && e.name === "echo")).toBe(true)
  // The Tool result reached the model through the agent.
  expect(JSON.stringify(server.requests.map((r) => r.body))).toContain("echo: offline")
  expect(liveAcpSessions()).toBe(0)
  expect(liveAcpBridges()).toBe(0)
}

describe("opencodeAgent with opencode-ai (Chat Completions)", () => {
  const provider = (url: string) =>
    opencodeAgent({
      config: localOpencodeConfig(url),
      directory: work,
      env: OPENCODE_OFFLINE_ENV,
    })

  it("calls an AML Tool over the bridge and submits a validated structured result", async () => {
    const server = await startModelServer("echo")
    try {
      expectStructured(await structuredRun(provider(server.url)), server)
    } finally {
      await server.close()
    }
  }, 180_000)

  it("cancels a turn: session/cancel, then the agent's tree is killed and reaped", async () => {
    const server = await startModelServer("echo")
    try {
      await cancelledRun(provider(server.url), server)
    } finally {
      await server.close()
    }
  }, 180_000)
})

describe("copilotAgent with @github/copilot (Chat Completions, offline mode)", () => {
  const provider = (url: string) =>
    copilotAgent({
      env: {
        COPILOT_MODEL: "scripted",
        COPILOT_OFFLINE: "true",
        COPILOT_PROVIDER_API_KEY: "dummy",
        COPILOT_PROVIDER_BASE_URL: url,
      },
      model: "scripted",
      workingDirectory: work,
    })

  it("calls an AML Tool over the bridge and submits a validated structured result", async () => {
    const server = await startModelServer("echo")
    try {
      expectStructured(await structuredRun(provider(server.url)), server)
    } finally {
      await server.close()
    }
  }, 180_000)

  it("cancels a turn: session/cancel, then the agent's tree is killed and reaped", async () => {
    const server = await startModelServer("echo")
    try {
      await cancelledRun(provider(server.url), server)
    } finally {
      await server.close()
    }
  }, 180_000)
})

describe("copilotAgent inside a Local Sandbox (Sandbox launch with a real agent)", () => {
  it("spawns copilot through the Sandbox runtime and completes the same structured run", async () => {
    const server = await startModelServer("echo")
    try {
      calls.length = 0
      const provider = copilotAgent({
        env: { COPILOT_MODEL: "scripted", COPILOT_OFFLINE: "true", COPILOT_PROVIDER_API_KEY: "dummy", COPILOT_PROVIDER_BASE_URL: server.url },
        model: "scripted",
      })
      const runtime = new AmlRuntime({ agentProvider: provider, sandboxProvider: localSandbox({ workspace: work }) })
      const events = traced(runtime, false)
      const Probe = async () =>
        JSON.stringify(
          await evaluate(
            <Agent>
              <Tool use={echo} />
              Call the echo tool with the text "offline", then submit its exact result as echoed.
            </Agent>,
            Result,
          ),
        )
      const value = JSON.parse(await runtime.evaluate(<Sandbox access="read-write">{<Probe />}</Sandbox>))
      expectStructured({ events, value }, server)
      const started = events.find((e) => e.name === "sandbox.process" && e.attributes.state === "started")
      expect(started.attributes["execution.id"]).toMatch(/^local-process:\d+$/)
      expect(exists(leaderPid(events))).toBe(false)
    } finally {
      await server.close()
    }
  }, 180_000)
})

describe("codexAgent with @zed-industries/codex-acp (Responses API)", () => {
  // @zed-industries/codex-acp 0.16 differs from the profile's target (@agentclientprotocol/
  // codex-acp) in two ways that matter offline: it names its key method "codex-api-key", not
  // "api-key", and it does not read CODEX_CONFIG. So this run passes no apiKey and points
  // CODEX_HOME (which `env` may override) at a prepared home: auth.json logs it in and
  // config.toml selects the scripted Responses API provider.
  const home = join(work, "codex-home")
  mkdirSync(home, { recursive: true })
  writeFileSync(join(home, "auth.json"), JSON.stringify({ OPENAI_API_KEY: "dummy" }))
  const provider = (url: string) => {
    writeFileSync(
      join(home, "config.toml"),
      `model = "gpt-5"\nmodel_provider = "local"\n\n[model_providers.local]\nname = "Local scripted"\nbase_url = "${url}"\nenv_key = "LOCAL_SCRIPTED_KEY"\nwire_api = "responses"\n`,
    )
    return codexAgent({ env: { CODEX_HOME: home, LOCAL_SCRIPTED_KEY: "dummy" }, model: "gpt-5", workingDirectory: work })
  }

  it("calls an AML Tool over the bridge and submits a validated structured result", async () => {
    const server = await startModelServer("echo")
    try {
      expectStructured(await structuredRun(provider(server.url)), server)
    } finally {
      await server.close()
    }
  }, 180_000)

  it("cancels a turn: session/cancel, then the agent's tree is killed and reaped", async () => {
    const server = await startModelServer("echo")
    try {
      await cancelledRun(provider(server.url), server)
    } finally {
      await server.close()
    }
  }, 180_000)
})

describe("piAgent with pi-acp 0.0.24 + @earendil-works/pi-coding-agent 0.74.2 (Chat Completions)", () => {
  // pi-acp reads nothing but its agent directory, which the profile owns (PI_CODING_AGENT_DIR
  // in the state directory); so piCommand is a small launcher that installs the scripted
  // provider (models.json, settings defaults) there and then runs the real pi. OPENAI_API_KEY
  // only satisfies pi-acp's "some credential is configured" check before pi starts.
  const launcher = join(work, "pi-offline")
  const provider = (url: string) => {
    const models = {
      providers: {
        local: {
          api: "openai-completions",
          apiKey: "dummy",
          baseUrl: url,
          models: [{ contextWindow: 128000, cost: { cacheRead: 0, cacheWrite: 0, input: 0, output: 0 }, id: "scripted", input: ["text"], maxTokens: 4096, name: "Scripted", reasoning: false }],
        },
      },
    }
    const settings = { defaultModel: "scripted", defaultProvider: "local", quietStartup: true }
    writeFileSync(join(work, "pi-models.json"), JSON.stringify(models))
    writeFileSync(
      launcher,
      `#!/bin/sh\ncp "${join(work, "pi-models.json")}" "$PI_CODING_AGENT_DIR/models.json"\nprintf '%s' '${JSON.stringify(settings)}' > "$PI_CODING_AGENT_DIR/settings.json"\nexec "${join(process.cwd(), "node_modules/.bin/pi")}" "$@"\n`,
    )
    chmodSync(launcher, 0o755)
    return piAgent({ env: { OPENAI_API_KEY: "dummy" }, piCommand: launcher, workingDirectory: work })
  }

  it("calls an AML Tool through pi-mcp-adapter and the bridge and submits a validated structured result", async () => {
    const server = await startModelServer("echo")
    try {
      expectStructured(await structuredRun(provider(server.url)), server)
    } finally {
      await server.close()
    }
  }, 180_000)

  it("cancels a turn: session/cancel, then the agent's tree is killed and reaped", async () => {
    const server = await startModelServer("echo")
    try {
      await cancelledRun(provider(server.url), server)
    } finally {
      await server.close()
    }
  }, 180_000)
})
