// Token usage from a real coding agent (issue 37), offline: opencode-ai through the built-in
// profile against the scripted model server on 127.0.0.1 (support/model-server.ts), whose
// every answer reports usage (10 prompt + 2 completion tokens). The agent's ACP prompt
// response carries it; AML maps it onto the Agent span, `finish` and the OTel exporter.
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, createOpenTelemetryTracer, opencodeAgent } from "@aml-jsx/sdk"

import { removeTempProjects, runCli, tempProject } from "./support/cli.js"
import { startModelServer } from "./support/model-server.js"
import { memoryTracing } from "./support/otel.js"
import { OPENCODE_OFFLINE_ENV, localOpencodeConfig } from "./support/opencode-local.js"

const work = realpathSync(mkdtempSync(join(tmpdir(), "aml-usage-agent-")))
afterAll(() => {
  rmSync(work, { force: true, recursive: true })
  removeTempProjects()
})

// The profile's options, shared with the `aml run` workflow below (which builds its own).
const options = (url: string) =>
  ({
    config: localOpencodeConfig(url),
    directory: work,
    env: OPENCODE_OFFLINE_ENV,
  }) as const

const provider = (url: string) => opencodeAgent(options(url))

describe("opencodeAgent reporting usage", () => {
  it("surfaces the agent's usage on the Agent span, in finish and as gen_ai.usage.*", async () => {
    const server = await startModelServer("echo")
    try {
      const { exporter, tracer } = memoryTracing()
      const runtime = new AmlRuntime({ agentProvider: provider(server.url), trace: createOpenTelemetryTracer({ tracer }) })
      const events: any[] = []
      const finishes: any[] = []
      runtime.on("trace", (event) => void events.push(event))
      runtime.on("finish", (event) => void finishes.push(event))
      await runtime.evaluate(<Agent>Say something.</Agent>)
      const agentEnd = events.find((e) => e.type === "span.end" && e.name === "Agent")
      const usage = agentEnd.attributes.usage
      // What the agent reports depends on its own accounting (a title request, several
      // steps); every count is at least the one answer the server gave.
      expect(usage.inputTokens).toBeGreaterThanOrEqual(10)
      expect(usage.outputTokens).toBeGreaterThanOrEqual(2)
      const completed = events.find((e) => e.name === "acp.session.prompt.completed")
      expect(typeof completed.attributes.usage).toBe("string")
      expect(finishes[0].usage).toEqual(usage)
      const root = events.find((e) => e.type === "span.end" && e.kind === "evaluation")
      expect(root.attributes.usage).toEqual(usage)
      const span = exporter.getFinishedSpans().find((s) => s.name.startsWith("invoke_agent"))!
      expect(span.attributes["gen_ai.usage.input_tokens"]).toBe(usage.inputTokens)
      expect(span.attributes["gen_ai.usage.output_tokens"]).toBe(usage.outputTokens)
    } finally {
      await server.close()
    }
  }, 120_000)

  it("aml run prints the agent's totals and --json includes them", async () => {
    const server = await startModelServer("echo")
    try {
      const dir = tempProject({
        "workflow.tsx":
          // The tree itself (not a runtime of its own): `aml run` evaluates it with its runtime.
          'import { Agent, opencodeAgent } from "@aml-jsx/sdk"\n' +
          "const provider = opencodeAgent(JSON.parse(process.env.AML_TEST_OPENCODE!))\n" +
          "export default <Agent provider={provider}>Say something.</Agent>\n",
      })
      const env = { AML_TEST_OPENCODE: JSON.stringify(options(server.url)) }
      const result = await runCli(["run", join(dir, "workflow.tsx"), "--json"], { env, killAfterMs: 180_000 })
      expect(result.code).toBe(0)
      const envelope = JSON.parse(result.stdout)
      expect(Object.keys(envelope)).toEqual(["runId", "durationMs", "success", "result", "usage"])
      expect(envelope.usage.inputTokens).toBeGreaterThanOrEqual(10)
      expect(envelope.usage.outputTokens).toBeGreaterThanOrEqual(2)
      const { inputTokens, outputTokens } = envelope.usage
      expect(result.stderr).toMatch(new RegExp(`— tokens: ${inputTokens} input, ${outputTokens} output(, [^\\n]*)?\\n$`))
    } finally {
      await server.close()
    }
  }, 120_000)
})
