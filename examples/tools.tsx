// `aml run examples/tools.tsx` — a typed Tool granted to one Agent. The provider (standing
// in for a model) calls it through request.tools; invalid input never reaches execute().
import { z } from "zod"

import { Agent, Tool, defineTool } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const lineCount = defineTool({
  name: "line_count",
  description: "Count the lines of a text.",
  input: z.object({ text: z.string() }),
  output: z.object({ lines: z.number().int() }),
  execute: ({ text }) => ({ lines: text.split("\n").length }),
})

const provider = new DeterministicAgentProvider({
  name: "tool-caller",
  respond: async (request, context) => {
    const tool = request.tools.find((candidate) => candidate.name === "line_count")
    if (tool === undefined) return { text: "no tool granted" }
    const result = await tool.execute({ text: "a\nb\nc" }, context)
    const invalid = await tool.execute({ text: 42 }, context).then(
      () => "accepted",
      (error: Error) => error.name,
    )
    return { text: `line_count -> ${JSON.stringify(result)}; invalid input -> ${invalid}` }
  },
})

export default (
  <Agent provider={provider}>
    <Tool use={lineCount} />
    Count the lines of the snippet.
  </Agent>
)
