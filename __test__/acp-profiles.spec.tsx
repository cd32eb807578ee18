// The built-in ACP profiles (INVENTORY BA-1 codex, BA-2 copilot, BA-3 glm, BA-4 opencode):
// option validation with the exact TypeErrors, and the launch each one produces, observed
// from inside a scripted agent started through a wrapper command (argv, env, cwd).
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, FollowUp, Sandbox, Tool, codexAgent, copilotAgent, defineTool, evaluate, glmAgent, opencodeAgent } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { SCRIPTED_AGENT } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

const dir = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-profiles-")))
afterAll(() => rmSync(dir, { force: true, recursive: true }))
// A launcher that runs the scripted agent with whatever arguments the profile adds.
const wrapper = join(dir, "scripted-acp")
writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT}" "$@"\n`)
chmodSync(wrapper, 0o755)

async function observe(provider: any, vars: string[], props: Record<string, unknown> = {}) {
  const text = await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent {...props}>{`echo-vars ${vars.join(",")}`}</Agent>)
  return JSON.parse(text) as { argv: string[]; cwd: string; vars: Record<string, string | null> }
}

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

async function notInstalled(provider: any, command: string, hint: string) {
  const error = await rejection(new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>))
  expect(error.cause.message).toBe(`ACP Agent command "${command}" was not found. ${hint}`)
}

describe("codexAgent", () => {
  it("launches codex-acp with private state and Codex configuration", async () => {
    const provider = codexAgent({
      command: wrapper,
      config: { approval_policy: "never", model: "base" },
      env: { AML_TEST_ANY_AUTH: "1", CODEX_HOME: "/custom/home" },
      model: "gpt-test",
      reasoningEffort: "high",
      workingDirectory: dir,
    })
    expect(provider.name).toBe("codex")
    expect(Object.isFrozen(provider)).toBe(true)
    const seen = await observe(provider, ["CODEX_HOME", "CODEX_CONFIG", "CODEX_PATH", "CODEX_SQLITE_HOME", "APP_SERVER_LOGS", "INITIAL_AGENT_MODE", "NO_BROWSER", "CODEX_API_KEY"], { system: "Be exact." })
    expect(seen.cwd).toBe(dir)
    expect(seen.argv).toEqual([])
    const state = seen.vars.CODEX_SQLITE_HOME!
    expect(state).toMatch(/\/aml-acp-[A-Za-z0-9]{6}$/)
    expect(seen.vars).toMatchObject({
      APP_SERVER_LOGS: join(state, "logs"),
      CODEX_API_KEY: null,
      CODEX_HOME: "/custom/home",
      CODEX_PATH: "codex",
      INITIAL_AGENT_MODE: "agent-full-access",
      NO_BROWSER: "1",
    })
    expect(JSON.parse(seen.vars.CODEX_CONFIG!)).toEqual({
      approval_policy: "never",
      developer_instructions: "Be exact.",
      model: "gpt-test",
      model_reasoning_effort: "high",
    })
  })

  it("maps read-only, the Agent model and an API key", async () => {
    const provider = codexAgent({ apiKey: "sk-test", codexPathOverride: "/opt/codex", command: wrapper, env: { AML_TEST_ANY_AUTH: "1" } })
    const seen = await observe(provider, ["CODEX_HOME", "CODEX_CONFIG", "CODEX_PATH", "INITIAL_AGENT_MODE", "CODEX_API_KEY"], {
      model: "agent-model",
      permissions: { filesystem: "read-only" },
    })
    expect(seen.vars.CODEX_HOME).toMatch(/\/aml-acp-/)
    expect(seen.vars).toMatchObject({ CODEX_API_KEY: "sk-test", CODEX_PATH: "/opt/codex", INITIAL_AGENT_MODE: "read-only" })
    expect(JSON.parse(seen.vars.CODEX_CONFIG!)).toEqual({ model: "agent-model" })
  })

  it("validates options", () => {
    typeError(() => codexAgent(null as any), "Codex Agent options must be an object")
    for (const key of ["command", "apiKey", "model", "codexPathOverride", "workingDirectory"]) {
      typeError(() => codexAgent({ [key]: " x" } as any), `Codex ${key} must be a non-empty normalized string`)
    }
    typeError(() => codexAgent({ args: ["a\0"] }), "Codex args must be strings without null bytes")
    typeError(() => codexAgent({ env: [] as any }), "Codex env must be an object")
    typeError(() => codexAgent({ config: [] as any }), "Codex config must be an object")
    typeError(() => codexAgent({ config: { n: 1n } as any }), "Codex config must be JSON serializable")
    typeError(() => codexAgent({ reasoningEffort: "extreme" as any }), "Codex reasoningEffort is unsupported")
  })

  it("names the missing executable and how to install it", async () => {
    // codex-acp is a devDependency (the end-to-end tests), so node_modules/.bin has it.
    await notInstalled(codexAgent({ command: "aml-no-codex-acp" }), "aml-no-codex-acp", "Install it with `npm install --global @agentclientprotocol/codex-acp @openai/codex`, or set the Codex command option")
  })
})

describe("copilotAgent", () => {
  const flags = (state: string) => [
    "--extra",
    "--acp",
    "--no-auto-update",
    `--log-dir=${join(state, "logs")}`,
    "--no-custom-instructions",
    "--disable-builtin-mcps",
    "--no-ask-user",
  ]

  it("launches copilot --acp with private state and non-interactive flags", async () => {
    const provider = copilotAgent({ args: ["--extra"], command: wrapper, env: { GH_TOKEN: "t" } })
    expect(provider.name).toBe("copilot")
    const seen = await observe(provider, ["COPILOT_HOME", "HOME"])
    const state = seen.vars.COPILOT_HOME!
    expect(seen.vars.HOME).toBe(state)
    expect(seen.argv).toEqual([...flags(state), "--auth-token-env=GH_TOKEN", "--no-auto-login", "--no-color", "--no-remote", "--no-remote-export", "--model=auto"])
  })

  it("maps narrowed permissions to deny rules and exclusions, and the system text to a prelude", async () => {
    const provider = copilotAgent({ command: wrapper, model: "gpt-x", reasoningEffort: "max" })
    const seen = await observe(provider, ["COPILOT_HOME"], { permissions: { filesystem: "read-only", network: false, shell: false } })
    const tail = seen.argv.slice(seen.argv.indexOf("--no-remote-export") + 1)
    expect(tail).toEqual([
      "--model=gpt-x",
      "--reasoning-effort=max",
      "--deny-tool=write",
      "--deny-tool=shell",
      "--deny-tool=url",
      "--excluded-tools",
      "edit",
      "write",
      "bash",
      "web_fetch",
      "web_search",
    ])
    const prompt = await new AmlRuntime({ agentProvider: provider }).evaluate(
      <Agent system="Answer briefly.">
        echo-prompt
        <FollowUp>echo-prompt</FollowUp>
      </Agent>,
    )
    expect(prompt).toBe("echo-prompt")
    const first = await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent system="Answer briefly.">echo-prompt</Agent>)
    expect(first).toBe("<SYSTEM>\nAnswer briefly.\n</SYSTEM>\n\necho-prompt")
  })

  describe("the --auth-token-env variable", () => {
    afterEach(() => vi.unstubAllEnvs())
    const tokenFlag = (argv: string[]) => argv.filter((arg) => arg.startsWith("--auth-token-env="))
    const ambient = () => {
      vi.stubEnv("COPILOT_GITHUB_TOKEN", "ambient-copilot")
      vi.stubEnv("GH_TOKEN", "ambient-gh")
      vi.stubEnv("GITHUB_TOKEN", "ambient-github")
    }

    it("is the first token variable of the explicit env, even when ambient ones come earlier", async () => {
      ambient()
      const seen = await observe(copilotAgent({ command: wrapper, env: { GITHUB_TOKEN: "explicit" } }), ["GITHUB_TOKEN"])
      expect(tokenFlag(seen.argv)).toEqual(["--auth-token-env=GITHUB_TOKEN"])
      const both = await observe(copilotAgent({ command: wrapper, env: { GH_TOKEN: "a", GITHUB_TOKEN: "b" } }), ["GH_TOKEN"])
      expect(tokenFlag(both.argv)).toEqual(["--auth-token-env=GH_TOKEN"])
    })

    it("falls back to the inherited environment on the host only", async () => {
      ambient()
      const host = await observe(copilotAgent({ command: wrapper }), ["HOME"])
      expect(tokenFlag(host.argv)).toEqual(["--auth-token-env=COPILOT_GITHUB_TOKEN"])
      vi.stubEnv("COPILOT_GITHUB_TOKEN", undefined)
      const next = await observe(copilotAgent({ command: wrapper }), ["HOME"])
      expect(tokenFlag(next.argv)).toEqual(["--auth-token-env=GH_TOKEN"])

      // A Sandbox guest does not inherit this process's environment: no ambient variable.
      const spawned: string[][] = []
      const sandboxProvider = new DeterministicSandboxProvider({
        exec: (command) => ({ exitCode: 0, stderr: "", stdout: command === "pwd" ? "/guest\n" : "" }),
        spawn(_command, args) {
          spawned.push([...args])
          return Object.freeze({
            id: "copilot-guest",
            async kill() {},
            stderr: new ReadableStream({ start: (c) => c.close() }),
            stdin: new WritableStream(),
            stdout: new ReadableStream({ start: (c) => c.close() }),
            async wait() {
              return { exitCode: 0 }
            },
          }) as any
        },
      })
      const inSandbox = (env?: Record<string, string>) =>
        rejection(
          new AmlRuntime({ agentProvider: copilotAgent(env === undefined ? {} : { env }) }).evaluate(
            <Sandbox access="read-write" provider={sandboxProvider}>
              <Agent>x</Agent>
            </Sandbox>,
          ),
        )
      await inSandbox()
      await inSandbox({ GITHUB_TOKEN: "explicit" })
      expect(spawned.map(tokenFlag)).toEqual([[], ["--auth-token-env=GITHUB_TOKEN"]])
    })
  })

  it("names JS Tools and the structured-output submit tool by their Copilot-qualified names", async () => {
    const probe = defineTool({ description: "A probe", execute: () => "ok", input: z.object({}), name: "probe_tool" })
    const runtime = new AmlRuntime({ agentProvider: copilotAgent({ command: wrapper, env: { AML_TEST_MCP_HTTP: "1" } }) })
    const events = traced(runtime, true)
    async function Structured() {
      await evaluate(
        <Agent system="Be exact.">
          <Tool use={probe} />
          echo-prompt
        </Agent>,
        z.object({ done: z.boolean() }),
      ).catch(() => undefined)
      return "settled"
    }
    expect(await runtime.evaluate(<Structured />)).toBe("settled")
    const prompt: string = events.find((e) => e.name === "acp.session.prompt.submitted").attributes.prompt
    const server = /^- probe_tool: (aml_[a-f0-9]{32})-probe_tool$/m.exec(prompt)?.[1]
    expect(server).toBeDefined()
    expect(prompt).toBe(
      [
        "<SYSTEM>\nBe exact.\n</SYSTEM>",
        `AML JavaScript Tools use these Copilot MCP tool names:\n- probe_tool: ${server}-probe_tool`,
        "echo-prompt",
        `Call the Copilot MCP tool "${server}-aml_submit_result" once with the final value in its result field. If the Tool returns an error, correct the result and retry the call. After the Tool accepts a result, do not call it again. Do not return a substitute JSON value only as message text.`,
      ].join("\n\n"),
    )
  })

  it("validates options", () => {
    typeError(() => copilotAgent(5 as any), "Copilot Agent options must be an object")
    for (const key of ["command", "model", "workingDirectory"]) {
      typeError(() => copilotAgent({ [key]: "" } as any), `Copilot ${key} must be a non-empty normalized string`)
    }
    typeError(() => copilotAgent({ args: [1] as any }), "Copilot args must be strings without null bytes")
    typeError(() => copilotAgent({ env: "x" as any }), "Copilot env must be an object")
    typeError(() => copilotAgent({ reasoningEffort: "ultra" as any }), "Copilot reasoningEffort is unsupported")
  })

  it("names the missing executable and how to install it", async () => {
    await notInstalled(copilotAgent({ command: "aml-no-copilot" }), "aml-no-copilot", "Install it with `npm install --global @github/copilot`, or set the Copilot command option")
  })
})

describe("glmAgent", () => {
  it("launches glm-acp-agent with a private session directory", async () => {
    const provider = glmAgent({ apiKey: "z-key", baseUrl: "http://127.0.0.1:9/v1", command: wrapper, env: { AML_TEST_ANY_AUTH: "1" }, maxTokens: 512, model: "glm-5" })
    expect(provider.name).toBe("glm")
    const seen = await observe(provider, ["Z_AI_API_KEY", "ACP_GLM_BASE_URL", "ACP_GLM_MAX_TOKENS", "ACP_GLM_MODEL", "ACP_GLM_SESSION_DIR"], { model: "glm-agent" })
    expect(seen.vars).toMatchObject({ ACP_GLM_BASE_URL: "http://127.0.0.1:9/v1", ACP_GLM_MAX_TOKENS: "512", ACP_GLM_MODEL: "glm-agent", Z_AI_API_KEY: "z-key" })
    expect(seen.vars.ACP_GLM_SESSION_DIR).toMatch(/\/aml-acp-[A-Za-z0-9]{6}\/sessions$/)
    const prelude = await new AmlRuntime({ agentProvider: glmAgent({ command: wrapper }) }).evaluate(<Agent system="S">echo-prompt</Agent>)
    expect(prelude).toBe("<SYSTEM>\nS\n</SYSTEM>\n\necho-prompt")
  })

  it("validates options", () => {
    typeError(() => glmAgent([] as any), "GLM Agent options must be an object")
    for (const key of ["command", "apiKey", "baseUrl", "model", "workingDirectory"]) {
      typeError(() => glmAgent({ [key]: "a\0" } as any), `GLM ${key} must be a non-empty normalized string`)
    }
    typeError(() => glmAgent({ args: "x" as any }), "GLM args must be strings without null bytes")
    typeError(() => glmAgent({ env: null as any }), "GLM env must be an object")
    for (const maxTokens of [0, 1.5, -1, Number.MAX_SAFE_INTEGER + 1, "5"]) {
      typeError(() => glmAgent({ maxTokens } as any), "GLM maxTokens must be a positive safe integer")
    }
  })

  it("names the missing executable and how to install it", async () => {
    await notInstalled(glmAgent(), "glm-acp-agent", "Install it with `npm install --global glm-acp-agent`, or set the GLM command option")
  })
})

describe("opencodeAgent", () => {
  it("launches opencode acp --pure with private state and an AML primary agent", async () => {
    const provider = opencodeAgent({
      args: ["--print-logs"],
      command: wrapper,
      config: { agent: { review: { mode: "subagent" } }, model: "from-config", share: "disabled" },
      directory: dir,
      model: "local/scripted",
    })
    expect(provider.name).toBe("opencode")
    const seen = await observe(provider, ["OPENCODE_CONFIG_CONTENT", "OPENCODE_DB", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"], {
      permissions: { network: false, shell: false },
    })
    expect(seen.argv).toEqual(["acp", "--pure", "--cwd", dir, "--print-logs"])
    const state = seen.vars.OPENCODE_DB!.replace(/\/opencode\.db$/, "")
    expect(seen.vars).toMatchObject({
      XDG_CACHE_HOME: join(state, "cache"),
      XDG_CONFIG_HOME: join(state, "config"),
      XDG_DATA_HOME: join(state, "data"),
      XDG_STATE_HOME: join(state, "state"),
    })
    const config = JSON.parse(seen.vars.OPENCODE_CONFIG_CONTENT!)
    expect(config).toEqual({
      agent: {
        aml: {
          mode: "primary",
          permission: { "*": "allow", bash: "deny", webfetch: "deny", websearch: "deny" },
          tools: { "*": true, bash: false, webfetch: false, websearch: false },
        },
        review: { mode: "subagent" },
      },
      default_agent: "aml",
      model: "local/scripted",
      share: "disabled",
    })
    // OpenCode applies the last matching rule: the wildcard comes first, the denials after it.
    expect(Object.keys(config.agent.aml.permission)).toEqual(["*", "bash", "webfetch", "websearch"])
    expect(Object.keys(config.agent.aml.tools)).toEqual(["*", "bash", "webfetch", "websearch"])
  })

  it("allows everything with one wildcard rule when nothing is withheld", async () => {
    const provider = opencodeAgent({ command: wrapper })
    const seen = await observe(provider, ["OPENCODE_CONFIG_CONTENT"], {})
    const config = JSON.parse(seen.vars.OPENCODE_CONFIG_CONTENT!)
    expect(config.agent.aml).toEqual({ mode: "primary", permission: { "*": "allow" }, tools: { "*": true } })
  })

  it("keeps config.model without a model option and denies edits when read-only", async () => {
    const provider = opencodeAgent({ command: wrapper, config: { model: "from-config" } })
    const seen = await observe(provider, ["OPENCODE_CONFIG_CONTENT"], { permissions: { filesystem: "read-only" } })
    const config = JSON.parse(seen.vars.OPENCODE_CONFIG_CONTENT!)
    expect(config.model).toBe("from-config")
    expect(config.agent.aml.tools).toEqual({ "*": true, edit: false, write: false })
    expect(Object.keys(config.agent.aml.permission)).toEqual(["*", "edit", "write"])
    expect(config.agent.aml.permission).toEqual({ "*": "allow", edit: "deny", write: "deny" })
  })

  it("validates options", () => {
    typeError(() => opencodeAgent("x" as any), "OpenCode Agent options must be an object")
    for (const key of ["command", "directory", "model"]) {
      typeError(() => opencodeAgent({ [key]: " " } as any), `OpenCode ${key} must be a non-empty normalized string`)
    }
    typeError(() => opencodeAgent({ args: [null] as any }), "OpenCode args must be strings without null bytes")
    typeError(() => opencodeAgent({ env: 1 as any }), "OpenCode env must be an object")
    typeError(() => opencodeAgent({ config: [] as any }), "OpenCode config must be an object")
    typeError(() => opencodeAgent({ config: { n: Infinity } as any }), "OpenCode config must contain only finite JSON numbers")
    typeError(() => opencodeAgent({ config: { f: () => 1 } as any }), "OpenCode config must contain only JSON values")
    const cyclic: any = {}
    cyclic.self = cyclic
    typeError(() => opencodeAgent({ config: cyclic }), "OpenCode config must not contain cycles")
  })

  it("names the missing executable and how to install it", async () => {
    await notInstalled(opencodeAgent({ command: "aml-no-opencode" }), "aml-no-opencode", "Install it with `npm install --global opencode-ai`, or set the OpenCode command option")
  })
})
