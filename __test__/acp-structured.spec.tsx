// Structured output for ACP Agents (INVENTORY BA-0): the reserved aml_submit_result Tool on
// the MCP bridge, called by the scripted agent with the official MCP client — valid, invalid
// then corrected, missing, premature, duplicate — with the exact response texts and the
// agent.output events.
import { describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, FollowUp, evaluate } from "@aml-jsx/sdk"

import { liveAcpBridges } from "../lib/core/native.js"
import { scriptedAcp } from "./support/acp.js"
import { traced } from "./support/trace.js"

const Answer = z.object({ answer: z.number() })
const INSTRUCTION =
  "Call aml_submit_result once with the final value in its result field. If the Tool returns an error, correct the result and retry the call. After the Tool accepts a result, do not call it again. Do not return a substitute JSON value only as message text."

/** Runs `tree` as a structured evaluation; resolves { value } or { error }, plus the trace. */
async function structured(tree: any, launch = {}) {
  const { provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" }, ...launch })
  const runtime = new AmlRuntime({ agentProvider: provider })
  const events = traced(runtime, true)
  let replies: any
  const Probe = async () => {
    try {
      return JSON.stringify({ value: await evaluate(tree, Answer) })
    } catch (error: any) {
      return JSON.stringify({ error: error.message, cause: error.cause?.message })
    }
  }
  const outcome = JSON.parse(await runtime.evaluate(<Probe />))
  const text = events.find((e) => e.name === "Agent" && e.type === "span.end")
  replies = events.filter((e) => e.name === "acp.session.update" && JSON.parse(e.attributes.update).sessionUpdate === "agent_message_chunk")
  const last = replies.at(-1)
  const lastText = last === undefined ? undefined : JSON.parse(last.attributes.update).content.text
  const agentReply = lastText?.startsWith("{") ? JSON.parse(lastText) : lastText
  const outputs = events.filter((e) => e.name === "agent.output").map((e) => ({ ...e.attributes }))
  expect(liveAcpBridges()).toBe(0)
  return { agentReply, events, outcome, outputs, text }
}

const submit = (...args: unknown[]) => `submit ${JSON.stringify(args)}`

describe("aml_submit_result", () => {
  it("accepts the first valid candidate and appends the instruction to the final turn", async () => {
    const { agentReply, events, outcome, outputs } = await structured(<Agent>{submit({ result: { answer: 42 } })}</Agent>)
    expect(outcome).toEqual({ value: { answer: 42 } })
    expect(agentReply.answers).toEqual([{ isError: false, text: "Structured result accepted." }])
    expect(agentReply.submit).toEqual({
      description: "Submit the final structured result for this AML invocation.",
      inputSchema: expect.objectContaining({
        additionalProperties: false,
        properties: { result: expect.objectContaining({ type: "object" }) },
        required: ["result"],
        type: "object",
      }),
      name: "aml_submit_result",
    })
    expect(outputs).toEqual([{ call: 1, output: '{"answer":42}', status: "accepted" }])
    const prompt = events.find((e) => e.name === "acp.session.prompt.submitted").attributes.prompt
    expect(prompt).toBe(`${submit({ result: { answer: 42 } })}\n\n${INSTRUCTION}`)
  })

  it("returns schema failures to the agent, which can correct them", async () => {
    const { agentReply, outcome, outputs } = await structured(
      <Agent>{submit({ result: { answer: "many" } }, { result: { answer: 7 } })}</Agent>,
    )
    expect(outcome).toEqual({ value: { answer: 7 } })
    expect(agentReply.answers[0].isError).toBe(true)
    expect(agentReply.answers[0].text).toMatch(/^Agent structured output failed schema validation: \[\{.*"path":\["answer"\].*\}\]$/)
    expect(agentReply.answers[1]).toEqual({ isError: false, text: "Structured result accepted." })
    expect(outputs.map((o) => [o.call, o.status])).toEqual([
      [1, "invalid"],
      [2, "accepted"],
    ])
  })

  it("ignores submissions after the first valid one", async () => {
    const { agentReply, outcome, outputs } = await structured(<Agent>{submit({ result: { answer: 1 } }, { result: { answer: 2 } })}</Agent>)
    expect(outcome).toEqual({ value: { answer: 1 } })
    expect(agentReply.answers[1]).toEqual({
      isError: false,
      text: "A valid structured result was already accepted; this submission was ignored.",
    })
    expect(outputs.map((o) => o.status)).toEqual(["accepted", "ignored"])
  })

  it("requires the result property", async () => {
    const { agentReply, outcome, outputs } = await structured(<Agent>{submit({ answer: 3 })}</Agent>)
    expect(agentReply.answers).toEqual([{ isError: true, text: "aml_submit_result requires a result property" }])
    expect(outputs).toEqual([{ call: 1, output: '{"answer":3}', status: "invalid" }])
    expect(outcome.cause).toBe("ACP Agent did not submit a valid result through aml_submit_result")
  })

  it("refuses a submission before the final authored turn", async () => {
    const { outcome, outputs, events } = await structured(
      <Agent>
        {submit({ result: { answer: 1 } })}
        <FollowUp>{submit({ result: { answer: 2 } })}</FollowUp>
      </Agent>,
    )
    expect(outcome).toEqual({ value: { answer: 2 } })
    expect(outputs.map((o) => [o.call, o.status])).toEqual([
      [1, "invalid"],
      [2, "accepted"],
    ])
    const first = events.filter((e) => e.name === "acp.session.update")[0]
    const reply = JSON.parse(JSON.parse(first.attributes.update).content.text)
    expect(reply.answers).toEqual([{ isError: true, text: "ACP Agent submitted structured output before the final authored turn" }])
    // Only the final turn carries the instruction.
    const prompts = events.filter((e) => e.name === "acp.session.prompt.submitted").map((e) => e.attributes.prompt)
    expect(prompts[0]).toBe(submit({ result: { answer: 1 } }))
    expect(prompts[1].endsWith(INSTRUCTION)).toBe(true)
  })

  it("fails when the agent never submits", async () => {
    const { outcome, outputs } = await structured(<Agent>just text</Agent>)
    expect(outcome.cause).toBe("ACP Agent did not submit a valid result through aml_submit_result")
    expect(outputs).toEqual([])
  })

  it("uses the launch's structured output instruction", async () => {
    const { events } = await structured(<Agent>{submit({ result: { answer: 5 } })}</Agent>, {
      structuredOutputInstruction: "Call aml_submit_result with the answer.",
    })
    const prompt = events.find((e) => e.name === "acp.session.prompt.submitted").attributes.prompt
    expect(prompt).toBe(`${submit({ result: { answer: 5 } })}\n\nCall aml_submit_result with the answer.`)
  })

  it("keeps submission content out of metadata-only traces", async () => {
    const { provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
    const runtime = new AmlRuntime({ agentProvider: provider })
    const metadata = traced(runtime, false)
    const Probe = async () => JSON.stringify(await evaluate(<Agent>{submit({ result: { answer: 9 } })}</Agent>, Answer))
    expect(JSON.parse(await runtime.evaluate(<Probe />))).toEqual({ answer: 9 })
    const output = metadata.find((e) => e.name === "agent.output")
    expect(output.attributes).toEqual({ call: 1, status: "accepted" })
  })
})

it("a text invocation starts no bridge and offers no aml_submit_result", async () => {
  const { provider } = scriptedAcp({ env: { AML_TEST_MCP_HTTP: "1" } })
  const created = JSON.parse(await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>echo-session</Agent>))
  expect(created.mcpServers).toEqual([])
})
