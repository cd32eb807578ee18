// `aml run examples/context.tsx` — a Context carries a dependency down the tree without
// threading props; the nearest Provider wins.
import { Agent, createContext, useContext } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const Audience = createContext<string>("Audience", "developers")

const provider = new DeterministicAgentProvider({
  name: "writer",
  respond: (request) => ({ text: `(${request.system}) ${request.prompt}` }),
})

function Summary(props: { topic: string }) {
  const audience = useContext(Audience)
  return (
    <Agent provider={provider} system={`Write for ${audience}.`}>
      Summarize {props.topic}.
    </Agent>
  )
}

export default (
  <>
    <Summary topic="the release" />
    {"\n"}
    <Audience.Provider value="executives">
      <Summary topic="the roadmap" />
    </Audience.Provider>
  </>
)
