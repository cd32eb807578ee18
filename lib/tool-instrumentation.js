// The Tool wrappers a provider receives in `request.tools` (TL-4): each call opens a `tool`
// span under the Agent span and runs the registered port's full validation pipeline.

import { masked } from "./component-scope.js"

/** Wraps `port` for one Agent call whose trace identity is `agentTrace`. */
export function instrumentTool(domain, port, agentTrace) {
  const execute = async (input, context) => {
    const spanId = domain.openSpan("tool", port.name, agentTrace.spanId)
    const trace = Object.freeze({ parentSpanId: agentTrace.spanId, runId: agentTrace.runId, spanId })
    const signal = context?.signal ?? domain.signal
    try {
      const output = await masked(port.run, input, Object.freeze({ signal, trace }), domain.tracing)
      domain.closeSpan(spanId, false, undefined, undefined, output.sensitive)
      return output.value
    } catch (error) {
      domain.closeSpan(spanId, true, error)
      throw error
    }
  }
  return Object.freeze({
    description: port.description,
    execute,
    inputSchema: port.inputSchema,
    kind: "javascript",
    name: port.name,
  })
}
