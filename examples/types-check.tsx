// Compile-time checks of the public types (run by `npm run test:types`). Every
// `@ts-expect-error` line must be an error; everything else must type-check under the
// strict tsconfig. Nothing here evaluates a primitive, so importing the file is harmless.

import {
  Agent,
  AmlRuntime,
  createConsoleTracer,
  evaluate,
  File,
  FollowUp,
  Include,
  Loop,
  Mcp,
  Parallel,
  ProcessSignalCancellation,
  Sandbox,
  Script,
  Skill,
  System,
  Tool,
  Workspace,
  WorkspaceConflictError,
  type AgentProvider,
  type AmlEvaluationFinishEvent,
  type AmlEvaluationStartEvent,
  type AmlMcpServer,
  type AmlModelSchema,
  type AmlNode,
  type AmlRenderable,
  type AmlTool,
  type AmlTraceEvent,
  type SandboxProvider,
  type TraceSink,
  type WorkspaceProvider,
} from "@aml-jsx/sdk"
import type { JSX } from "@aml-jsx/sdk/jsx-runtime"

/** True only when A and B are the same type (not merely mutually assignable, and not `any`). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expectType<Condition extends true>(): void {}

expectType<Equal<JSX.Element, AmlNode>>()

declare const lookupOrder: AmlTool
declare const docsServer: AmlMcpServer
declare const sandboxProvider: SandboxProvider<{ directory: string }>
declare const workspaceProvider: WorkspaceProvider

// --- Function components ---------------------------------------------------------------

function Greeting(props: { name: string }) {
  return `Hello, ${props.name}`
}

async function Uppercase(props: { children?: AmlRenderable }) {
  return (await evaluate(props.children)).toUpperCase()
}

function Plain() {
  return { not: "renderable" }
}

export const greeting: AmlNode = <Greeting name="AML" />
export const nested = (
  <Uppercase>
    <Greeting name="nested" /> and {42} {null} {false} {["a", "b"]}
  </Uppercase>
)
export const fragment = (
  <>
    one<>two</>
  </>
)

// @ts-expect-error intrinsic elements do not exist in AML
export const intrinsic = <div />

// @ts-expect-error `name` must be a string
export const wrongProp = <Greeting name={42} />

// @ts-expect-error a required prop is missing
export const missingProp = <Greeting />

// @ts-expect-error a component must return something renderable
export const notRenderable = <Plain />

// --- Primitives ------------------------------------------------------------------------

// Primitive nodes reference declared-only values, so they are built inside a function that
// is never called.
export function primitiveNodes(): readonly AmlNode[] {
  const agent = (
    <Agent model="reviewer" system="Be brief." permissions={{ network: false }}>
      <System>Use only the evidence given.</System>
      <Skill name="House style" description="Editorial rules">
        Prefer short sections.
      </Skill>
      <Skill src="./skills/review.md" />
      <Tool use={lookupOrder} />
      <Mcp name="github" />
      <Mcp use={docsServer} />
      Review the change.
      <FollowUp>Summarize in three bullets.</FollowUp>
    </Agent>
  )

  // @ts-expect-error model must be a string
  const badModel = <Agent model={1}>x</Agent>

  // @ts-expect-error permissions.filesystem is a fixed union
  const badPermissions = <Agent permissions={{ filesystem: "everything" }}>x</Agent>

  // @ts-expect-error <Tool> requires `use`
  const toolWithoutUse = <Tool />

  // @ts-expect-error <Mcp> takes exactly one of name and use
  const mcpBoth = <Mcp name="github" use={docsServer} />

  const resources = (
    <Workspace id="review-42" provider={workspaceProvider} load={false} save={{ on: "success", retention: 3 }}>
      <Sandbox provider={sandboxProvider} access="read-write" root="repo">
        <Sandbox access="read-only" cwd="src">
          <Script command="node" args={["--version"]} timeoutMs={10_000} />
          <Script shell="bash">echo hi</Script>
        </Sandbox>
      </Sandbox>
      <File path="reports/summary.md">Done.</File>
      <File path="reports/copy.md" src="./template.md" />
      <Include path="reports/summary.md" maxBytes={4096} />
      <Include src="./notes.md" />
      <Parallel>
        <Agent>Review correctness.</Agent>
        <Agent>Review maintainability.</Agent>
      </Parallel>
    </Workspace>
  )

  // @ts-expect-error the command form accepts no children
  const commandWithChildren = <Script command="ls">-la</Script>

  // @ts-expect-error the shell form needs a known interpreter
  const unknownShell = <Script shell="zsh">echo hi</Script>

  // @ts-expect-error access is "read-only" or "read-write"
  const badAccess = <Sandbox access="rw" />

  // @ts-expect-error load is a boolean or an options object
  const badLoad = <Workspace load="yes" />

  return [agent, badModel, badPermissions, toolWithoutUse, mcpBoth, resources, commandWithChildren, unknownShell, badAccess, badLoad]
}

// --- Structured evaluate and Loop ------------------------------------------------------

type Verdict = { verdict: "pass" | "fail"; notes: string[] }
declare const VerdictSchema: AmlModelSchema<Verdict>

export async function Structured() {
  const verdict = await evaluate(<Agent>Judge the change.</Agent>, VerdictSchema)
  expectType<Equal<typeof verdict, Verdict>>()
  const text = await evaluate(<Agent>Plain text.</Agent>)
  expectType<Equal<typeof text, string>>()
  return `${verdict.verdict}: ${verdict.notes.join(", ")} ${text}`
}

type Counter = { count: number }
declare const CounterSchema: AmlModelSchema<Counter>

export function loop(): AmlNode {
  return (
    <Loop
      schema={CounterSchema}
      initial={{ count: 0 }}
      render={({ iteration, state }) => {
        expectType<Equal<typeof state, { readonly count: number }>>()
        return (
          <Agent>
            Iteration {iteration}: count is {state.count}.
          </Agent>
        )
      }}
    />
  )
}

// --- Runtime, events and tracing -------------------------------------------------------

const provider = {
  name: "echo",
  async run(request, context) {
    context.signal.throwIfAborted()
    return { text: request.prompt }
  },
} satisfies AgentProvider

const sink: TraceSink = (event: AmlTraceEvent) => {
  if (event.type === "span.end") return event.durationMs.toFixed(1)
  if (event.type === "event") return event.name
  return event.kind
}

export function configure(): AmlRuntime {
  const runtime = new AmlRuntime({
    agentProvider: provider,
    sandboxProvider,
    workspaceProvider,
    system: "Follow policy.",
    cwd: ".",
    allowedTools: ["lookup_order"],
    allowedMcpServers: ["github"],
    trace: createConsoleTracer({ captureContent: false, write: (line) => process.stderr.write(`${line}\n`) }),
    onTraceError: (error, event) => console.error(error, event.sequence),
    maxAgentCalls: 32,
    maxConcurrentAgents: 4,
    maxDepth: 16,
    maxTurnsPerAgent: 16,
    maxStateTransitions: 16,
  })
  const off: () => void = runtime.on("trace", sink)
  off()
  runtime.on("start", (event) => expectType<Equal<typeof event, AmlEvaluationStartEvent>>())
  runtime.on("trace", (event) => expectType<Equal<typeof event, AmlTraceEvent>>())
  runtime.once("finish", async (event: AmlEvaluationFinishEvent) => {
    if (event.status === "error") console.error(event.error)
  })
  // @ts-expect-error unknown event name
  runtime.on("progress", () => {})
  return runtime
}

export async function run(runtime: AmlRuntime): Promise<number | undefined> {
  const cancellation = new ProcessSignalCancellation({ cleanupDeadlineMs: 15_000 })
  try {
    const text: string = await runtime.evaluate(<Greeting name="x" />, { signal: cancellation.signal })
    return text.length
  } catch (error) {
    if (WorkspaceConflictError.is(error, "review-42")) {
      const id: string = error.workspaceId
      return id.length
    }
    throw error
  } finally {
    cancellation.dispose()
  }
}
