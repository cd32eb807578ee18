// Structured output for ACP Agents (INVENTORY BA-0 "MCP bridge", SO-1): the reserved
// `aml_submit_result` Tool served by the bridge. Each candidate is validated at once with the
// evaluation's schema (the structured-output service); the first valid one wins, later ones
// are ignored, and every submission is an `agent.output` event on the current turn.

export const SUBMIT_TOOL = "aml_submit_result"

export const DEFAULT_INSTRUCTION =
  "Call aml_submit_result once with the final value in its result field. If the Tool returns an error, correct the result and retry the call. After the Tool accepts a result, do not call it again. Do not return a substitute JSON value only as message text."

const json = (value) => {
  try {
    return JSON.stringify(value) ?? "null"
  } catch {
    return "null"
  }
}

export class Submission {
  #service
  #final = false
  #calls = 0
  #accepted = false
  #value
  #point = () => {}

  constructor(service) {
    this.#service = service
  }

  /** Where `agent.output` events go: `(name, attributes, sensitive)` on the current turn. */
  attach(point) {
    this.#point = point
  }

  /** The wrapper lent to the native dispatcher; `execute` never runs the TL-3 pipeline. */
  tool() {
    return {
      description: "Submit the final structured result for this AML invocation.",
      execute: (input) => this.#submit(input),
      inputSchema: {
        additionalProperties: false,
        properties: { result: this.#service.jsonSchema },
        required: ["result"],
        type: "object",
      },
      kind: "javascript",
      name: SUBMIT_TOOL,
    }
  }

  beginFinalTurn() {
    this.#final = true
  }

  async #submit(input) {
    const call = ++this.#calls
    const hasResult = typeof input === "object" && input !== null && Object.hasOwn(input, "result")
    const report = (status) => this.#point("agent.output", { call, status }, { output: json(hasResult ? input.result : input) })
    if (!this.#final) {
      report("invalid")
      throw new Error("ACP Agent submitted structured output before the final authored turn")
    }
    if (this.#accepted) {
      report("ignored")
      return "A valid structured result was already accepted; this submission was ignored."
    }
    if (!hasResult) {
      report("invalid")
      throw new Error("aml_submit_result requires a result property")
    }
    try {
      await this.#service.validate(input.result)
    } catch (error) {
      report("invalid")
      throw new Error(`${error?.message}: ${json(error?.cause)}`)
    }
    this.#accepted = true
    this.#value = input.result
    report("accepted")
    return "Structured result accepted."
  }

  /** The accepted candidate (the runtime validates it once more), or the documented error. */
  result() {
    if (!this.#accepted) throw new Error("ACP Agent did not submit a valid result through aml_submit_result")
    return this.#value
  }
}
