// A journal whose append() returns a promise holds the Agent's concurrency slot until the
// record is durable (docs/JOURNAL.md): a queued Agent never starts while the record of the one
// before it is still in flight, so a crash then cannot make a settled step run again.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, Parallel, evaluate, type AmlJournalEntry } from "@aml-jsx/sdk"
import { z } from "zod"

function gatedJournal() {
  const log: string[] = []
  const gates: (() => void)[] = []
  const journal = {
    entries: () => [],
    append(entry: AmlJournalEntry) {
      log.push(`append ${(entry.value as { text?: string }).text ?? "structured"}`)
      return new Promise<void>((resolve) => gates.push(() => {
        log.push("durable")
        resolve()
      }))
    },
  }
  return { gates, journal, log }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

describe("journal records and the Agent slot", () => {
  for (const shape of ["text", "structured"] as const) {
    it(`a queued ${shape} Agent starts only after the record before it is durable`, async () => {
      const { gates, journal, log } = gatedJournal()
      const provider = {
        name: "p",
        async run(request: { prompt: string }) {
          log.push(`start ${request.prompt}`)
          return shape === "text" ? { text: request.prompt } : { structured: { said: request.prompt }, text: "" }
        },
      }
      const runtime = new AmlRuntime({ agentProvider: provider, maxConcurrentAgents: 1 })
      const schema = z.object({ said: z.string() })
      // Structured output goes through the general journaled path (lib/journal/agent.js).
      const Structured = async ({ prompt }: { prompt: string }) => JSON.stringify(await evaluate(<Agent>{prompt}</Agent>, schema))
      const agent = (prompt: string) => (shape === "text" ? <Agent>{prompt}</Agent> : <Structured prompt={prompt} />)
      const running = runtime.evaluate(
        <Parallel>
          {agent("a")}
          {agent("b")}
        </Parallel>,
        { journal },
      )
      while (gates.length === 0) await tick()
      await tick()
      expect(log).not.toContain("start b")
      gates.shift()!()
      while (gates.length === 0) await tick()
      gates.shift()!()
      await running
      expect(log.filter((line) => line.startsWith("append"))).toEqual(shape === "text" ? ["append a", "append b"] : ["append structured", "append structured"])
      const a = log.indexOf("durable")
      expect(log.indexOf("start b")).toBeGreaterThan(a)
    })
  }
})
