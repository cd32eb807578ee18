// The Agent observability registry (INVENTORY RT-4) is a realm WeakMap keyed by the
// AgentExecutionContext. This copy answers for the contexts it stamped without inserting
// them (lib/agents/services.js); a registry another copy created gets the service stored
// eagerly. Both must give provider helpers the same service for the same context.
import { spawnSync } from "node:child_process"
import { fileURLToPath, pathToFileURL } from "node:url"

import { describe, expect, it } from "vitest"

const entry = pathToFileURL(fileURLToPath(new URL("../index.js", import.meta.url))).href
const KEY = "@aml-jsx/sdk/agent-observability-services"

// Runs one Agent whose provider looks its context up in the realm registry, twice, and
// opens and closes an agent.session span through the service it found.
function probe(prelude: string) {
  const script = `
    ${prelude}
    const { Agent, AmlRuntime } = await import(${JSON.stringify(entry)})
    const registry = globalThis[Symbol.for(${JSON.stringify(KEY)})]
    const seen = []
    const provider = {
      name: "probe",
      async run(_request, context) {
        const service = registry.get(context)
        seen.push(registry.has(context), service === registry.get(context), Object.isFrozen(context))
        const span = service.openSpan("agent.session")
        service.closeSpan(span)
        seen.push(registry.get({}) === undefined)
        return { text: "ok" }
      },
    }
    const kinds = []
    const runtime = new AmlRuntime({ agentProvider: provider })
    runtime.on("trace", (event) => { if (event.type === "span.end") kinds.push(event.name) })
    const { jsx } = await import(${JSON.stringify(entry.replace("index.js", "jsx-runtime/index.js"))})
    const text = await runtime.evaluate(jsx(Agent, { children: "hi" }))
    console.log(JSON.stringify({ text, seen, kinds, plain: registry.constructor === WeakMap }))
  `
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
  expect(result.stderr).toBe("")
  return JSON.parse(result.stdout)
}

describe("Agent observability registry across SDK copies", () => {
  it("answers for the contexts this copy created, without storing them", () => {
    const outcome = probe("")
    expect(outcome.plain).toBe(false)
    expect(outcome).toMatchObject({ text: "ok", seen: [true, true, true, true] })
    expect(outcome.kinds).toEqual(["agent.session", "Agent", "evaluate"])
  })

  it("stores the service eagerly in a plain WeakMap another copy created", () => {
    const outcome = probe(
      `Object.defineProperty(globalThis, Symbol.for(${JSON.stringify(KEY)}), { value: new WeakMap(), configurable: false, enumerable: false, writable: false })`,
    )
    expect(outcome.plain).toBe(true)
    expect(outcome).toMatchObject({ text: "ok", seen: [true, true, true, true] })
    expect(outcome.kinds).toEqual(["agent.session", "Agent", "evaluate"])
  })
})
