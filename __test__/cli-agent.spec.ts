// `aml run --agent <profile>[:<model>]` (docs/CLI.md): a plain <Agent> workflow run on a
// built-in coding-agent profile, here opencode-ai offline against the scripted model server.
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

import { removeTempProjects, runCli, tempProject } from "./support/cli.js"
import { startModelServer } from "./support/model-server.js"
import { OPENCODE_OFFLINE_ENV, localOpencodeConfig } from "./support/opencode-local.js"

afterAll(() => removeTempProjects())

const PLAIN = 'import { Agent } from "@aml-jsx/sdk"\nexport default <Agent>Say something.</Agent>\n'

describe("aml run --agent", () => {
  it("refuses an unknown profile and an empty model before loading anything", async () => {
    const dir = tempProject({ "workflow.tsx": PLAIN })
    const unknown = await runCli(["run", join(dir, "workflow.tsx"), "--agent", "gpt"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr.split("\n")[0]).toBe("aml: unknown agent profile `gpt` for `--agent` (one of codex, copilot, glm, opencode, pi)")
    const empty = await runCli(["run", join(dir, "workflow.tsx"), "--agent", "opencode:"])
    expect(empty.code).toBe(1)
    expect(empty.stderr.split("\n")[0]).toBe("aml: option `--agent <profile>[:<model>]` has an empty model")
  })

  it("runs a workflow whose Agents name no provider on the chosen profile and model", async () => {
    const server = await startModelServer("echo")
    try {
      // OpenCode's own project configuration: the scripted server as an OpenAI-compatible
      // provider; the model comes from --agent.
      const { model: _model, ...config } = localOpencodeConfig(server.url)
      const dir = tempProject({ "workflow.tsx": PLAIN, "opencode.json": JSON.stringify(config) })
      const env = OPENCODE_OFFLINE_ENV
      const result = await runCli(["run", join(dir, "workflow.tsx"), "--agent", "opencode:local/scripted", "--json"], {
        cwd: dir,
        env,
        killAfterMs: 180_000,
      })
      expect(result.stderr).not.toContain("has no provider")
      expect(result.code).toBe(0)
      const envelope = JSON.parse(result.stdout)
      expect(envelope.success).toBe(true)
      expect(typeof envelope.result).toBe("string")
      expect(envelope.result.length).toBeGreaterThan(0)
    } finally {
      await server.close()
    }
  }, 180_000)
})
