// `aml run examples/observe-agent.tsx --trace --capture-content` — watch one Agent work:
// an incident-analysis <Agent> with an application Tool and two <FollowUp> turns. stdout
// gets the final five-line update; stderr gets the console tracer's activity feed: the
// agent.session span, one agent.turn per authored turn (initial, then each follow-up, in
// order), the Tool call inside the first turn, and agent.cleanup after the last one.
//
// The analyst is deterministic by default (a provider session written with
// AbstractAgentProvider, so its turns are real provider turns). Set AML_OPENCODE_MODEL
// (for example `opencode-go/minimax-m3`) to run the same tree on OpenCode through its ACP
// profile; the trace then also carries every ACP update as `acp.session.update`.
import { z } from "zod"

import {
  AbstractAgentProvider,
  Agent,
  FollowUp,
  Tool,
  defineTool,
  opencodeAgent,
  type AgentExecutionContext,
  type AgentProvider,
  type AgentProviderSession,
  type AgentProviderTurn,
  type AgentRequest,
} from "@aml-jsx/sdk"

const INCIDENT_PACKET = Object.freeze({
  deployedAt: "2026-11-30T14:02Z",
  latencyP95: { before: "180ms", after: "1.4s" },
  rollback: "not started",
  spans: Object.freeze([
    "checkout.api 14:03 p95 1.4s, 92% of it in db.query orders_by_customer",
    "db.query orders_by_customer 14:03 full scan, index orders_customer_idx missing",
    "payments.api 14:03 p95 210ms, unchanged",
  ]),
})

const ReadIncidentPacket = defineTool({
  name: "read_incident_packet",
  description: "Read the complete, application-owned incident packet",
  input: z.object({}),
  execute: async () => INCIDENT_PACKET,
})

// A stand-in for a model: each turn's answer is derived from the packet the Tool returned.
class ScriptedAnalyst extends AbstractAgentProvider<"scripted-analyst"> {
  constructor() {
    super("scripted-analyst")
  }

  protected async openSession(request: AgentRequest): Promise<AgentProviderSession> {
    let packet: typeof INCIDENT_PACKET | undefined
    return {
      async runTurn(turn: AgentProviderTurn, turnContext: AgentExecutionContext) {
        if (turn.index === 0) {
          const tool = request.tools.find((candidate) => candidate.name === "read_incident_packet")
          if (tool === undefined) throw new Error("read_incident_packet was not granted")
          packet = (await tool.execute({}, { signal: turnContext.signal, trace: turnContext.trace })) as typeof INCIDENT_PACKET
          return { text: `Hypothesis: the ${packet.deployedAt} deploy dropped orders_customer_idx; checkout p95 rose to ${packet.latencyP95.after}.` }
        }
        if (packet === undefined) throw new Error("the packet was not read in the first turn")
        if (!turn.isFinal) {
          return { text: "Alternative: database load unrelated to the deploy. Distinguish with the query plan before 14:02." }
        }
        return {
          text: [
            `Fact: checkout p95 went from ${packet.latencyP95.before} to ${packet.latencyP95.after} after the ${packet.deployedAt} deploy; payments is unchanged.`,
            "Inference: the deploy removed orders_customer_idx, so orders_by_customer scans the table.",
            "Uncertainty: unrelated database load has not been ruled out.",
            "Next check: compare the orders_by_customer query plan before and after 14:02.",
            `Rollback status: ${packet.rollback}.`,
          ].join("\n"),
        }
      },
      async close() {},
    }
  }
}

const model = process.env.AML_OPENCODE_MODEL
const provider: AgentProvider = model === undefined || model === "" ? new ScriptedAnalyst() : opencodeAgent({ model })

function IncidentReview() {
  return (
    <Agent provider={provider} system="You are an incident analyst. Separate direct evidence, inference, and missing information.">
      <Tool use={ReadIncidentPacket} />
      Call read_incident_packet. Form a preliminary incident hypothesis using only the returned evidence.
      <FollowUp>
        Audit the preliminary hypothesis. Identify the strongest alternative explanation and the next observation that
        would distinguish between them.
      </FollowUp>
      <FollowUp>
        Produce the final five-line incident update. Label facts, inference, uncertainty, next check, and rollback status.
      </FollowUp>
    </Agent>
  )
}

export default <IncidentReview />
