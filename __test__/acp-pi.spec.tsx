// piAgent (INVENTORY BA-5): option validation with the exact TypeErrors, and the launch it
// produces (argv, env, cwd, state files, the pi-for-aml wrapper, the pi-mcp-adapter
// configuration, session configuration), observed from inside the scripted ACP agent started
// through a wrapper command.
import { createHash } from "node:crypto"
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Mcp, Tool, defineMcpServer, defineTool, evaluate, piAgent } from "@aml-jsx/sdk"

import { PI_STRUCTURED_INSTRUCTION, adapterServer, stripPiStartupInfo } from "../lib/agents/profiles/pi.js"
import { SCRIPTED_AGENT } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

const dir = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-pi-")))
afterAll(() => rmSync(dir, { force: true, recursive: true }))
const wrapper = join(dir, "scripted-acp")
writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT}" "$@"\n`)
chmodSync(wrapper, 0o755)

const ADAPTER = "/opt/pi mcp/index.ts"
const VARS = ["HOME", "PI_ACP_PI_COMMAND", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_SKIP_VERSION_CHECK", "PI_TEST_KEY"]
const FILES = ["agent/settings.json", "pi-for-aml", "agent/mcp.json", "agent/mcp-cache.json"]

const lookup = defineTool({
  description: "Look a word up",
  execute: ({ word }: { word: string }) => word.toUpperCase(),
  input: z.object({ word: z.string() }),
  name: "lookup",
})

const run = (provider: any, text: string, props: Record<string, unknown> = {}, children: any = null) =>
  new AmlRuntime({ agentProvider: provider }).evaluate(
    <Agent {...props}>
      {children}
      {text}
    </Agent>,
  )

const vars = async (provider: any, props = {}, children: any = null) =>
  JSON.parse(await run(provider, `echo-vars ${VARS.join(",")}`, props, children)) as {
    argv: string[]
    cwd: string
    vars: Record<string, string | null>
  }
const files = async (provider: any, props = {}, children: any = null) =>
  JSON.parse(await run(provider, `read-files ${JSON.stringify(FILES)}`, props, children)) as Record<
    string,
    { content: string; mode: string } | null
  >

function typeError(fn: () => unknown, message: string) {
  let thrown: any
  try {
    fn()
  } catch (error) {
    thrown = error
  }
  expect(thrown?.constructor).toBe(TypeError)
  expect(thrown?.message).toBe(message)
}

describe("piAgent launch", () => {
  it("launches pi-acp with private state and runs the native pi directly by default", async () => {
    const provider = piAgent({ args: ["--verbose", "x y"], command: wrapper, env: { HOME: "/ignored", PI_TEST_KEY: "k" }, workingDirectory: dir })
    expect(provider.name).toBe("pi")
    expect(Object.isFrozen(provider)).toBe(true)
    const seen = await vars(provider)
    expect(seen.cwd).toBe(dir)
    expect(seen.argv).toEqual(["--verbose", "x y"])
    const state = seen.vars.HOME!
    expect(state).toMatch(/\/aml-acp-[A-Za-z0-9]{6}$/)
    expect(seen.vars).toEqual({
      HOME: state,
      PI_ACP_PI_COMMAND: "pi",
      PI_CODING_AGENT_DIR: join(state, "agent"),
      PI_CODING_AGENT_SESSION_DIR: join(state, "sessions"),
      PI_SKIP_VERSION_CHECK: "1",
      PI_TEST_KEY: "k",
    })
    const written = await files(provider)
    expect(written).toEqual({
      "agent/mcp-cache.json": null,
      "agent/mcp.json": null,
      "agent/settings.json": { content: '{"quietStartup":true}\n', mode: "600" },
      "pi-for-aml": null,
    })
  })

  it("narrowed permissions run Pi through the pi-for-aml wrapper with a --tools allowlist", async () => {
    const provider = piAgent({ command: wrapper, piCommand: "/opt/it's/pi" })
    const readOnly = { permissions: { filesystem: "read-only", shell: false } }
    const seen = await vars(provider, readOnly)
    expect(seen.vars.PI_ACP_PI_COMMAND).toBe(join(seen.vars.HOME!, "pi-for-aml"))
    const written = await files(provider, readOnly)
    expect(written["pi-for-aml"]).toEqual({
      content: `#!/bin/sh\nexec '/opt/it'\\''s/pi' --tools read,grep,find,ls "$@"\n`,
      mode: "700",
    })
    expect(written["agent/mcp.json"]).toBeNull()
    const noShell = await files(provider, { permissions: { shell: false } })
    expect(noShell["pi-for-aml"]!.content).toContain("--tools read,grep,find,ls,edit,write ")
    const readOnlyShell = await files(provider, { permissions: { filesystem: "read-only" } })
    expect(readOnlyShell["pi-for-aml"]!.content).toContain("--tools read,grep,find,ls,bash ")
    // Network has no Pi switch: denying it alone keeps the native command.
    expect((await vars(provider, { permissions: { network: false } })).vars.PI_ACP_PI_COMMAND).toBe("/opt/it's/pi")
  })

  it("routes the AML bridge and authored MCP servers through pi-mcp-adapter", async () => {
    const docs = defineMcpServer({ name: "docs", transport: { headers: { "X-Key": "v" }, type: "streamable-http", url: "http://127.0.0.1:9/mcp" } })
    const local = defineMcpServer({ name: "local", transport: { args: ["--x"], command: "local-mcp", env: { A: "1" }, type: "stdio" } })
    const provider = piAgent({ command: wrapper, mcpAdapterPath: ADAPTER })
    const children = (
      <>
        <Tool use={lookup} />
        <Mcp use={docs} />
        <Mcp use={local} />
      </>
    )
    const written = await files(provider, {}, children)
    expect(written["pi-for-aml"]!.content).toBe(
      `#!/bin/sh\nexec 'pi' --tools read,grep,find,ls,edit,write,bash,mcp -e '${ADAPTER}' "$@"\n`,
    )
    const config = JSON.parse(written["agent/mcp.json"]!.content)
    expect(written["agent/mcp.json"]!.mode).toBe("600")
    const names = Object.keys(config.mcpServers)
    expect(names.slice(0, 2)).toEqual(["docs", "local"])
    const bridgeName = names[2]!
    expect(bridgeName).toMatch(/^aml_[0-9a-f]{32}$/)
    expect(config.settings).toEqual({ toolPrefix: "none" })
    expect(config.mcpServers.docs).toEqual({ auth: false, headers: { "X-Key": "v" }, lifecycle: "lazy", url: "http://127.0.0.1:9/mcp" })
    expect(config.mcpServers.local).toEqual({ args: ["--x"], command: "local-mcp", env: { A: "1" }, lifecycle: "lazy" })
    const bridge = config.mcpServers[bridgeName]
    expect(bridge.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(bridge.headers.Authorization).toMatch(/^Bearer [0-9a-f-]{36}$/)
    // The cache pre-lists the bridge's Tools under pi-mcp-adapter's identity hash.
    const cache = JSON.parse(written["agent/mcp-cache.json"]!.content)
    expect(cache.version).toBe(1)
    expect(Object.keys(cache.servers)).toEqual([bridgeName])
    const entry = cache.servers[bridgeName]
    expect(entry.tools.map((tool: any) => tool.name)).toEqual(["lookup"])
    expect(entry.tools[0].inputSchema.properties.word).toEqual({ type: "string" })
    const identity = `{"args":undefined,"auth":false,"bearerToken":undefined,"bearerTokenEnv":undefined,"command":undefined,"cwd":undefined,"env":undefined,"excludeTools":undefined,"exposeResources":undefined,"headers":${JSON.stringify({ Authorization: bridge.headers.Authorization })},"includeTools":undefined,"socket":undefined,"url":${JSON.stringify(bridge.url)}}`
    expect(entry.configHash).toBe(createHash("sha256").update(identity).digest("hex"))
    // pi-acp gets no ACP MCP servers (it advertises none), and the first turn says how to call them.
    const session = JSON.parse(await run(provider, "echo-session", {}, children))
    expect(session.mcpServers).toEqual([])
    const prompt = await run(provider, "echo-prompt", { system: "Be exact." }, children)
    expect(prompt).toBe(
      '<SYSTEM>\nBe exact.\n</SYSTEM>\n\nAML JavaScript Tools and MCP servers are available through the mcp tool: call it with { tool: "<name>", args: { ... } }.\n\necho-prompt',
    )
  })

  it("adds the submission Tool for structured output and says how to call it through mcp", async () => {
    const provider = piAgent({ command: wrapper, mcpAdapterPath: ADAPTER })
    const Answer = z.object({ answer: z.number() })
    const runtime = new AmlRuntime({ agentProvider: provider })
    const Probe = async () => {
      try {
        await evaluate(<Agent>{`read-files ${JSON.stringify(FILES)}`}</Agent>, Answer)
        return "accepted"
      } catch (error: any) {
        return JSON.stringify({ cause: error.cause?.message, text: error.cause?.cause })
      }
    }
    // The scripted agent never submits, so the run fails; the prompt and files are what matter.
    const outcome = JSON.parse(await runtime.evaluate(<Probe />))
    expect(outcome.cause).toBe("ACP Agent did not submit a valid result through aml_submit_result")
    const seenPrompt = async () => {
      const Echo = async () => {
        try {
          await evaluate(<Agent>echo-prompt</Agent>, Answer)
        } catch {}
        return "done"
      }
      const r = new AmlRuntime({ agentProvider: provider })
      const events = traced(r, true)
      await r.evaluate(<Echo />)
      return events.find((e) => e.name === "acp.session.prompt.submitted")?.attributes.prompt
    }
    const prompt = await seenPrompt()
    expect(prompt.endsWith(`echo-prompt\n\n${PI_STRUCTURED_INSTRUCTION}`)).toBe(true)
    expect(PI_STRUCTURED_INSTRUCTION).toBe(
      'Call the mcp tool with tool "aml_submit_result" once, with the final value in args.result. If it returns an error, correct the result and retry the call. After it accepts a result, do not call it again. Do not return a substitute JSON value only as message text.',
    )
  })

  it("sets the model (Agent model first) and thinking level as ACP session configuration", async () => {
    const options = [
      { category: "model", currentValue: "a", id: "model", name: "Model", options: [{ name: "A", value: "a" }, { name: "B", value: "pi/b" }, { name: "C", value: "pi/c" }], type: "select" },
      { category: "thought_level", currentValue: "off", id: "thinking", name: "Thinking", options: ["off", "high"].map((value) => ({ name: value, value })), type: "select" },
    ]
    const env = { AML_TEST_CONFIG_OPTIONS: JSON.stringify(options) }
    const provider = piAgent({ command: wrapper, env, model: "pi/b", thinkingLevel: "high" })
    expect(JSON.parse(await run(provider, "echo-config"))).toEqual([
      { configId: "model", value: "pi/b" },
      { configId: "thinking", value: "high" },
    ])
    expect(JSON.parse(await run(provider, "echo-config", { model: "pi/c" }))).toEqual([
      { configId: "model", value: "pi/c" },
      { configId: "thinking", value: "high" },
    ])
    expect(JSON.parse(await run(piAgent({ command: wrapper, env }), "echo-config"))).toEqual([])
    // pi-acp releases without config options reject a configured model with the engine's message.
    const error = await rejection(run(piAgent({ command: wrapper, model: "pi/b" }), "x"))
    expect(error.cause.message).toBe('ACP Agent does not advertise requested session configuration category "model"')
  })

  it("discovers pi-mcp-adapter from the process cwd, or says how to provide it", async () => {
    const provider = piAgent({ command: wrapper })
    const children = <Tool use={lookup} />
    const written = await files(provider, {}, children)
    expect(written["pi-for-aml"]!.content).toContain(` -e '${realpathSync(join(process.cwd(), "node_modules/pi-mcp-adapter/index.ts"))}' `)
    const previous = process.cwd()
    process.chdir(dir)
    try {
      const error = await rejection(run(provider, "x", {}, children))
      expect(error.cause.constructor).toBe(Error)
      expect(error.cause.message).toBe(
        "Pi MCP adapter was not found: install pi-mcp-adapter and set the Pi mcpAdapterPath option to its entry point",
      )
    } finally {
      process.chdir(previous)
    }
  })

  it("names the missing executable and how to install it", async () => {
    const error = await rejection(run(piAgent({ command: "aml-missing-pi-acp" }), "x"))
    expect(error.cause.message).toBe(
      'ACP Agent command "aml-missing-pi-acp" was not found. Install it with `npm install --global pi-acp @earendil-works/pi-coding-agent`, or set the Pi command option',
    )
  })
})

describe("piAgent rules", () => {
  it("validates options with the documented TypeErrors", () => {
    typeError(() => piAgent(null as any), "Pi Agent options must be an object")
    typeError(() => piAgent([] as any), "Pi Agent options must be an object")
    typeError(() => piAgent("x" as any), "Pi Agent options must be an object")
    typeError(() => piAgent({ command: "" }), "Pi ACP command must be a non-empty normalized string")
    typeError(() => piAgent({ command: " pi-acp" }), "Pi ACP command must be a non-empty normalized string")
    typeError(() => piAgent({ piCommand: "pi\0" }), "Pi command must be a non-empty normalized string")
    typeError(() => piAgent({ model: 3 as any }), "Pi model must be a non-empty normalized string")
    typeError(() => piAgent({ mcpAdapterPath: "" }), "Pi MCP adapter path must be a non-empty normalized string")
    typeError(() => piAgent({ workingDirectory: "dir " }), "Pi workingDirectory must be a non-empty normalized string")
    typeError(() => piAgent({ args: ["a\0"] }), "Pi ACP args must be strings without null bytes")
    typeError(() => piAgent({ args: "a" as any }), "Pi ACP args must be strings without null bytes")
    typeError(() => piAgent({ env: [] as any }), "Pi env must be an object")
    typeError(() => piAgent({ env: { A: 1 } as any }), "Pi env must be an object")
    typeError(() => piAgent({ thinkingLevel: "extreme" as any }), "Pi thinkingLevel is unsupported")
    for (const level of ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const) {
      expect(piAgent({ thinkingLevel: level }).name).toBe("pi")
    }
    expect(piAgent().name).toBe("pi")
  })

  it("cannot represent an ACP-native MCP server in pi-mcp-adapter", () => {
    typeError(
      () => adapterServer({ headers: [], name: "events", type: "sse", url: "http://127.0.0.1:1/sse" }),
      'Pi MCP adapter cannot represent ACP-native server "events"',
    )
  })

  it("strips pi-acp startup information from a turn's text", () => {
    expect(stripPiStartupInfo("hello")).toBe("hello")
    const notice = "New version available: v0.80.0 (installed v0.74.2). Run: `npm i -g @mariozechner/pi-coding-agent`"
    expect(stripPiStartupInfo(`${notice}\nThe answer.`)).toBe("The answer.")
    const block = `pi v0.74.2\n---\n\n## Context\n- /work/AGENTS.md\n\n## Skills\n- /s/SKILL.md\n---\n${notice}\n`
    expect(stripPiStartupInfo(`${block}The answer.\n- a list`)).toBe("The answer.\n- a list")
    expect(stripPiStartupInfo("pi v1.0.0 is great")).toBe("pi v1.0.0 is great")
  })
})
