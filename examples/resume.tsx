// `aml run examples/resume.tsx` — a resumable evaluation (docs/JOURNAL.md). The third Agent
// of a three-step pipeline hits a provider outage; the retry passes the same journal, so the
// provider is called only for the step that had not settled, and the text is the one an
// uninterrupted run gives. `describeFailure` says what failed and whether retrying can help.
// This file retries inside one process, so it builds its own runtime; a workflow that only
// exports its tree gets the same from the CLI: `aml run flow.tsx --journal run.journal`,
// and after a failure the same command again (docs/CLI.md "Resuming with --journal").
import { Agent, AmlRuntime, createMemoryJournal, describeFailure, evaluate } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const calls: string[] = []
let outage = true

const provider = new DeterministicAgentProvider({
  name: "writer",
  respond: (request) => {
    calls.push(request.prompt.split(":")[0] ?? "")
    if (outage && request.prompt.startsWith("Review")) {
      outage = false
      throw new Error("503 Service Unavailable (upstream request id 7f3a)")
    }
    return { text: `[${request.prompt.split(":")[0]}]` }
  },
})

async function Pipeline() {
  const outline = await evaluate(<Agent>Outline: a post about journals</Agent>)
  const draft = await evaluate(<Agent>{`Draft: expand ${outline}`}</Agent>)
  const review = await evaluate(<Agent>{`Review: check ${draft}`}</Agent>)
  return `${outline} ${draft} ${review}`
}

export async function main() {
  const runtime = new AmlRuntime({ agentProvider: provider })
  const journal = createMemoryJournal()
  const lines: string[] = []
  try {
    await runtime.evaluate(<Pipeline />, { journal })
  } catch (error) {
    const failure = describeFailure(error)
    lines.push(`first run: ${failure.kind} failure, retryable=${failure.retryable}: ${failure.message}`)
  }
  lines.push(`first run called: ${calls.join(", ")}`)
  calls.length = 0
  const text = await runtime.evaluate(<Pipeline />, { journal })
  lines.push(`retry called: ${calls.join(", ")}`)
  lines.push(`result: ${text}`)
  return lines.join("\n")
}
