// A string appends its exact characters: lone UTF-16 surrogates survive the engine's UTF-8
// text (src/boundary/exact_text.rs) in text output, prompts, system text, follow-ups, provider output,
// Tool results and trace content. U+FDD0 (the binding's escape) and the private-use carrier
// characters are ordinary text to users.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, FollowUp, System, defineTool } from "@aml-jsx/sdk"
import type { AgentProvider, AgentRequest } from "@aml-jsx/sdk"

const LONE_HIGH = "\uD800"
const LONE_LOW = "\uDFFF"
const ESCAPE = "\uFDD0"
const CARRIER = "\uE000"

function recordingProvider(answer: (request: AgentRequest) => string) {
  const requests: AgentRequest[] = []
  const provider: AgentProvider = {
    name: "recording",
    async run(request) {
      requests.push(request)
      return { text: answer(request) }
    },
  }
  return { provider, requests }
}

describe("exact UTF-16 text", () => {
  it("keeps lone surrogates, the escape character and carriers in text output", async () => {
    const runtime = new AmlRuntime()
    const text = `a${LONE_HIGH}b${LONE_LOW}${ESCAPE}${ESCAPE}${CARRIER}😀${LONE_LOW}${LONE_HIGH}`
    expect(await runtime.evaluate(text)).toBe(text)
    expect(await runtime.evaluate([`x${LONE_HIGH}`, `${LONE_LOW}y`])).toBe(`x${LONE_HIGH}${LONE_LOW}y`)
  })

  it("gives the provider the exact prompt, system text and follow-ups, and keeps its output", async () => {
    const { provider, requests } = recordingProvider((request) => `${request.prompt}|${LONE_LOW}`)
    const runtime = new AmlRuntime({ agentProvider: provider, system: `runtime ${ESCAPE}` })
    const text = await runtime.evaluate(
      <Agent system={`prop ${LONE_HIGH}`}>
        <System>{`child ${LONE_LOW}`}</System>
        {`ask ${LONE_HIGH}${CARRIER}`}
        <FollowUp>{`then ${LONE_LOW}`}</FollowUp>
      </Agent>,
    )
    expect(requests[0]?.prompt).toBe(`ask ${LONE_HIGH}${CARRIER}`)
    expect(requests[0]?.system).toBe(`runtime ${ESCAPE}\nprop ${LONE_HIGH}\nchild ${LONE_LOW}`)
    expect(requests[0]?.followUps).toEqual([`then ${LONE_LOW}`])
    expect(text).toBe(`ask ${LONE_HIGH}${CARRIER}|${LONE_LOW}`)
  })

  it("keeps a Tool result returned as text", async () => {
    const echo = defineTool({
      description: "Echo",
      execute: ({ s }) => s,
      input: z.object({ s: z.string() }),
      name: "echo",
      output: z.string(),
    })
    async function Echo() {
      return await echo({ s: `tool ${LONE_HIGH}` })
    }
    expect(await new AmlRuntime().evaluate(<Echo />)).toBe(`tool ${LONE_HIGH}`)
  })

  it("reports exact content to a content-capturing trace listener", async () => {
    const { provider } = recordingProvider(() => `out ${LONE_LOW}`)
    const runtime = new AmlRuntime({ agentProvider: provider })
    const ends: Record<string, unknown>[] = []
    runtime.on(
      "trace",
      Object.assign(
        (event: { type: string; kind?: string; attributes: Record<string, unknown> }) => {
          if (event.type === "span.end" && event.kind === "agent") ends.push(event.attributes)
        },
        { captureContent: true },
      ),
    )
    await runtime.evaluate(<Agent>{`in ${LONE_HIGH}${ESCAPE}`}</Agent>)
    expect(ends).toHaveLength(1)
    expect(ends[0]?.prompt).toBe(`in ${LONE_HIGH}${ESCAPE}`)
    expect(ends[0]?.output).toBe(`out ${LONE_LOW}`)
  })
})
