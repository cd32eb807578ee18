// `aml run examples/structured.tsx` — one Agent returns JSON validated by a Standard
// Schema (zod here) before the workflow uses it.
import { z } from "zod"

import { Agent, evaluate } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const Finding = z.object({
  severity: z.enum(["low", "medium", "high"]),
  file: z.string(),
  summary: z.string(),
})

const provider = new DeterministicAgentProvider({
  name: "structured-reviewer",
  // A live provider receives request.output.jsonSchema and answers in that shape.
  respond: (request) =>
    request.output === undefined
      ? { text: "not structured" }
      : { text: "", structured: { severity: "high", file: "src/math.js", summary: "divide() ignores a zero divisor" } },
})

async function Triage() {
  const finding = await evaluate(<Agent provider={provider}>Report the riskiest finding.</Agent>, Finding)
  return `[${finding.severity.toUpperCase()}] ${finding.file}: ${finding.summary}`
}

export default <Triage />
