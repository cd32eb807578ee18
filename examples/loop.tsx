// `aml run examples/loop.tsx` — <Loop> re-renders one Agent over validated state. The
// provider stages patches with the runtime's aml_set_state Tool; the Loop ends when an
// iteration leaves the state unchanged.
import { z } from "zod"

import { Agent, Loop } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const Draft = z.object({ revision: z.number().int(), approved: z.boolean() })

const provider = new DeterministicAgentProvider({
  name: "reviser",
  respond: async (request, context) => {
    const revision = Number(/revision (\d+)/.exec(request.prompt)?.[1] ?? 0)
    const setState = request.tools.find((tool) => tool.name === "aml_set_state")
    if (revision < 3 && setState !== undefined) {
      await setState.execute({ updates: { revision: revision + 1, approved: revision + 1 === 3 } }, context)
      return { text: `revision ${revision}: revised` }
    }
    return { text: `revision ${revision}: approved` }
  },
})

export default (
  <Loop
    name="Revise"
    schema={Draft}
    initial={{ revision: 1, approved: false }}
    render={({ iteration, state }) => (
      <Agent provider={provider}>
        Iteration {iteration}: improve revision {state.revision} (approved: {String(state.approved)}).
      </Agent>
    )}
  />
)
