// `aml run examples/review.tsx` — the main job: review a small repository
// (examples/review-sample) with two specialist reviewers in parallel, each granted typed
// Tools that read the repository, then one Agent synthesises the verdict.
//
// The reviewers' provider is deterministic by default (rules stand in for a model, so the
// example needs no credentials). AML_REVIEW_PROVIDER_MODULE names a module whose default
// export is the Agent provider to use instead (a live ACP profile, for instance);
// AML_REVIEW_DIR reviews another directory.
import { readFile, readdir } from "node:fs/promises"
import { join, relative, resolve, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

import { z } from "zod"

import { Agent, Parallel, System, Tool, defineTool, type AgentProvider, type AgentTool } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const root = resolve(process.env.AML_REVIEW_DIR ?? fileURLToPath(new URL("./review-sample", import.meta.url)))

function insideRoot(path: string) {
  const absolute = resolve(root, path)
  if (absolute !== root && !absolute.startsWith(root + sep)) throw new Error(`${path} is outside the repository`)
  return absolute
}

const listFiles = defineTool({
  name: "list_files",
  description: "List the repository's source files (paths relative to its root).",
  input: z.object({}),
  execute: async () => {
    const entries = await readdir(root, { recursive: true, withFileTypes: true })
    return entries
      .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
      .sort()
  },
})

const readSource = defineTool({
  name: "read_file",
  description: "Read one UTF-8 file of the repository.",
  input: z.object({ path: z.string().min(1) }),
  execute: async ({ path }) => readFile(insideRoot(path), "utf8"),
})

type Rule = { focus: string; pattern: RegExp; finding: string }

// What the deterministic reviewer "knows": one rule per kind of problem it can spot.
const rules: readonly Rule[] = [
  { focus: "correctness", pattern: /return a \/ b/, finding: "divide() returns Infinity or NaN when b is 0 (average([]) is NaN)" },
  { focus: "correctness", pattern: /for \(const \w+ of values\)/, finding: "average() does not reject non-numeric values" },
  { focus: "formatting", pattern: /"\$" \+ cents \/ 100/, finding: 'formatPrice(150) prints "$1.5"; format with toFixed(2)' },
]

async function call(tools: readonly AgentTool[], name: string, input: unknown, signal: AbortSignal) {
  const tool = tools.find((candidate) => candidate.name === name)
  if (tool === undefined) throw new Error(`tool ${name} was not granted`)
  return tool.execute(input, { signal, trace: { runId: "review", spanId: "review" } })
}

const deterministicReviewer = new DeterministicAgentProvider({
  name: "rule-reviewer",
  respond: async (request, context) => {
    const focus = /Focus: (\w+)/.exec(request.system)?.[1] ?? ""
    const files = (await call(request.tools, "list_files", {}, context.signal)) as string[]
    const findings: string[] = []
    for (const file of files) {
      const text = String(await call(request.tools, "read_file", { path: file }, context.signal))
      text.split("\n").forEach((line, index) => {
        for (const rule of rules) {
          if (rule.focus === focus && rule.pattern.test(line)) findings.push(`- ${file}:${index + 1} ${rule.finding}`)
        }
      })
    }
    return { text: `${focus}:\n${findings.length === 0 ? "- no findings" : findings.join("\n")}\n` }
  },
})

const deterministicSynthesis = new DeterministicAgentProvider({
  name: "synthesis",
  respond: (request) => {
    const lines = request.prompt.split("\n")
    const count = lines.filter((line) => line.startsWith("- ") && line !== "- no findings").length
    const verdict = count === 0 ? "approve" : `request changes (${count} findings)`
    return { text: `${request.prompt}\n\nVerdict: ${verdict}` }
  },
})

async function configuredProvider(): Promise<AgentProvider | undefined> {
  const specifier = process.env.AML_REVIEW_PROVIDER_MODULE
  if (specifier === undefined || specifier === "") return undefined
  const module = (await import(pathToFileURL(resolve(specifier)).href)) as { default?: AgentProvider }
  if (module.default === undefined) throw new Error(`${specifier} must export an Agent provider as default`)
  return module.default
}

const configured = await configuredProvider()

/** The Agent providers of the reviewers and the synthesis. */
export const reviewProvider: { reviewer: AgentProvider; synthesis: AgentProvider } = {
  reviewer: configured ?? deterministicReviewer,
  synthesis: configured ?? deterministicSynthesis,
}

function Reviewer(props: { focus: string }) {
  return (
    <Agent provider={reviewProvider.reviewer}>
      <System>Focus: {props.focus}. Report findings as "- file:line problem" lines.</System>
      <Tool use={listFiles} />
      <Tool use={readSource} />
      Review every source file of the repository for {props.focus} problems.
    </Agent>
  )
}

export default (
  <Agent provider={reviewProvider.synthesis}>
    <System>Merge the specialists' findings and end with a verdict line.</System>
    Review of {relative(fileURLToPath(new URL(".", import.meta.url)), root) || "."}:{"\n\n"}
    <Parallel>
      <Reviewer focus="correctness" />
      <Reviewer focus="formatting" />
    </Parallel>
  </Agent>
)
