// Public type declarations of @aml-jsx/sdk (hand-written; see INVENTORY §1 and §2).
//
// The file ends with `export {}` so that only declarations marked `export` are public:
// helper types such as the local Standard Schema shapes stay module-private.

// ---------------------------------------------------------------------------------------
// Standard Schema (local, structurally compatible with @standard-schema/spec v1)
// ---------------------------------------------------------------------------------------

/** Structural copy of the Standard Schema v1 validator contract (not exported). */
interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaV1.Props<Input, Output>
}

declare namespace StandardSchemaV1 {
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }

  interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined
  }

  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown, options?: Options | undefined) => Result<Output> | Promise<Result<Output>>
    readonly types?: Types<Input, Output> | undefined
  }

  type Result<Output> = SuccessResult<Output> | FailureResult

  interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }

  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }

  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }

  interface PathSegment {
    readonly key: PropertyKey
  }

  type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["input"]
  type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["output"]
}

/** Structural copy of the Standard JSON Schema v1 contract (not exported). */
interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardJSONSchemaV1.Props<Input, Output>
}

declare namespace StandardJSONSchemaV1 {
  type Target = "draft-2020-12" | "draft-07" | "openapi-3.0" | (string & {})

  interface Options {
    readonly target: Target
    readonly libraryOptions?: Record<string, unknown> | undefined
  }

  interface Converter {
    input(options: Options): Record<string, unknown>
    output(options: Options): Record<string, unknown>
  }

  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly types?: StandardSchemaV1.Types<Input, Output> | undefined
    readonly jsonSchema: Converter
  }
}

/**
 * A schema AML can both describe to a model and enforce: a Standard Schema v1 validator
 * that also implements Standard JSON Schema v1 (for example a Zod 4 schema). AML asks it
 * for a draft 2020-12 JSON Schema and validates the model's answer with it.
 */
export type AmlModelSchema<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output> &
  StandardJSONSchemaV1<Input, Output>

// ---------------------------------------------------------------------------------------
// Values, nodes and components
// ---------------------------------------------------------------------------------------

/**
 * An immutable JSX descriptor. Building one never calls its component. Nodes carry a
 * non-enumerable `$$typeof` brand (`Symbol.for("@aml-jsx/sdk/node")`), so nodes made by
 * another copy of the SDK are accepted and look-alike plain objects are not.
 */
export interface AmlNode {
  /** Copy-stable brand identifying an AML node. */
  readonly $$typeof: symbol
  /** The component or primitive this node invokes. */
  readonly type: unknown
  /** Frozen shallow copy of the props, children included. */
  readonly props: Readonly<Record<string, unknown>>
}

/**
 * Anything AML can turn into text. Strings append as is, numbers through `String()`,
 * `null`/`undefined`/booleans append nothing, arrays concatenate without separators,
 * promises and thenables are awaited, and nodes are evaluated. Plain objects are rejected.
 */
export type AmlRenderable =
  | boolean
  | null
  | undefined
  | AmlNode
  | PromiseLike<AmlRenderable>
  | readonly AmlRenderable[]
  | number
  | string

/** A JSON value as AML snapshots it (Tool results, structured output, JSON Schemas). */
export type AmlJsonValue =
  | null
  | boolean
  | number
  | string
  | readonly AmlJsonValue[]
  | { readonly [key: string]: AmlJsonValue }

/**
 * Groups values without adding text of its own; `<>…</>` compiles to it. It is an ordinary
 * component, so it counts one depth level and shows up as a `component` span named "Fragment".
 */
export declare function Fragment(props: { children?: AmlRenderable }): AmlRenderable

// ---------------------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------------------

/** Options captured once by `new AmlRuntime()`; later changes to the object have no effect. */
export interface AmlRuntimeOptions {
  /** Default provider for every `<Agent>` that does not name its own. */
  agentProvider?: AgentProvider | undefined
  /** Default provider for outer `<Sandbox>` scopes that do not name their own. */
  sandboxProvider?: SandboxProvider | undefined
  /** Default provider for a `<Workspace>` that does not name its own. */
  workspaceProvider?: WorkspaceProvider | undefined
  /** System text placed before every Agent's own system text. Defaults to `""`. */
  system?: string | undefined
  /**
   * Base directory for `<Skill src>`, `<Include src>`, `<File src>` and unsandboxed
   * `<Script>`. Resolved with `path.resolve`; defaults to `process.cwd()`.
   */
  cwd?: string | undefined
  /** Allowlist of Tool names. Unrestricted when omitted. */
  allowedTools?: readonly string[] | undefined
  /** Allowlist of MCP server names. Unrestricted when omitted. */
  allowedMcpServers?: readonly string[] | undefined
  /** A trace sink registered as a runtime-wide `"trace"` listener. */
  trace?: TraceSink | undefined
  /** Receives trace listener failures. Without it AML writes one stderr line per evaluation. */
  onTraceError?: TraceErrorHandler | undefined
  /** Most Agent sessions per evaluation (default 32, `0` = unlimited). */
  maxAgentCalls?: number | undefined
  /** Most provider calls running at once per evaluation (default 4, `0` = unlimited). */
  maxConcurrentAgents?: number | undefined
  /** Deepest node nesting per evaluation (default 16, `0` = unlimited). */
  maxDepth?: number | undefined
  /** Most turns (prompt plus follow-ups) per Agent (default 16, `0` = unlimited). */
  maxTurnsPerAgent?: number | undefined
  /** Most committed `<Loop>` state transitions per evaluation (default 16, `0` = unlimited). Draft. */
  maxStateTransitions?: number | undefined
  /**
   * Token budget per evaluation (default `0` = off): counts each reported
   * {@link AgentUsage} as `totalTokens`, or `inputTokens + outputTokens` without a total.
   * Once reached, no further provider call starts, running calls are cancelled through their
   * signals, and the evaluation rejects with the `EvaluationError`
   * `AML evaluation reached maxTokens <limit> at Agent <spanId> (<used> tokens used)`.
   * A non-negative safe integer, else the constructor throws
   * `TypeError("maxTokens must be a non-negative safe integer")`.
   */
  maxTokens?: number | undefined
}

/** Per-call options of {@link AmlRuntime.evaluate}. */
export interface AmlEvaluationOptions {
  /** Caller-owned cancellation. An already aborted signal rejects with its reason at once. */
  readonly signal?: AbortSignal | undefined
  /**
   * Makes this evaluation resumable (docs/JOURNAL.md): every settled Agent invocation and
   * callable-Tool call is appended to `journal`, and a step whose position and request
   * match a recorded entry is answered from it without calling the provider or the Tool.
   * Pass the same journal to retry a failed evaluation. `null`/`undefined`: no journal.
   * Anything else without `entries()` and `append()` rejects with a `TypeError`.
   */
  readonly journal?: AmlJournal | null | undefined
  /**
   * This evaluation's token budget, replacing the runtime's `maxTokens` (`0` turns it off);
   * validated the same way (an invalid value rejects with the same `TypeError`).
   */
  readonly maxTokens?: number | undefined
}

/**
 * Evaluates AML trees. Options are validated and captured by the constructor (invalid ones
 * throw `TypeError`). Every `evaluate()` call is an independent evaluation domain with its
 * own run id, budgets, scheduler and evaluation-local listeners.
 */
export declare class AmlRuntime implements AmlEventSubscriber {
  constructor(options?: AmlRuntimeOptions)

  /** Adds a listener that sees every evaluation of this runtime; returns its remover. */
  on<Name extends AmlEventName>(name: Name, listener: AmlEventListener<Name>): () => void

  /** Like {@link AmlRuntime.on}, but the listener is removed before its first call. */
  once<Name extends AmlEventName>(name: Name, listener: AmlEventListener<Name>): () => void

  /**
   * Resolves `value` to text. Runs `start` listeners, the tree, resource cleanup and then
   * `finish` listeners; settles only after all of them.
   */
  evaluate(value: AmlRenderable, options?: AmlEvaluationOptions): Promise<string>
}

/**
 * Resolves a nested value inside the active function component, in the same evaluation
 * domain (budgets, cancellation, scopes, trace parent). Throws `EvaluationError`
 * synchronously when no AML component is active. Nested evaluations still pending when the
 * component settles are awaited before its result is used.
 */
export declare function evaluate(value: AmlRenderable): Promise<string>
/**
 * Structured form: `value` must resolve to exactly one `<Agent>`, whose structured answer
 * is validated by `schema`. Resolves with the schema's output type.
 */
export declare function evaluate<Schema extends AmlModelSchema>(
  value: AmlRenderable,
  schema: Schema,
): Promise<StandardSchemaV1.InferOutput<Schema>>

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/**
 * Invalid authored values or placement, missing scopes, cycles, policy and allowlist
 * violations, exceeded limits, structured-output failures, and wrapped provider failures.
 * Identified by `name === "EvaluationError"`; keeps `cause`.
 */
export declare class EvaluationError extends Error {
  constructor(message?: string, options?: ErrorOptions)
}

/** A Tool received input that is not JSON or fails its input schema. `name === "ToolInputError"`. */
export declare class ToolInputError extends Error {
  constructor(message?: string, options?: ErrorOptions)
}

/** A Tool returned output that fails its output schema or is not JSON. `name === "ToolOutputError"`. */
export declare class ToolOutputError extends Error {
  constructor(message?: string, options?: ErrorOptions)
}

/**
 * Another active writer owns the same durable Workspace identity. The only AML error with
 * a `code`. Use {@link WorkspaceConflictError.is} rather than `instanceof` so errors from
 * other physical SDK copies are recognised too.
 */
export declare class WorkspaceConflictError extends Error {
  /** Creates the conflict error for `workspaceId`. */
  constructor(workspaceId: string)
  /** Always `"AML_WORKSPACE_CONFLICT"`. */
  readonly code: "AML_WORKSPACE_CONFLICT"
  /** The contested Workspace id. */
  readonly workspaceId: string
  /**
   * Structural check by `code` (and `workspaceId` when given); never throws, even on
   * hostile values.
   */
  static is(value: unknown, workspaceId?: string): value is WorkspaceConflictError
}

// ---------------------------------------------------------------------------------------
// Cancellation
// ---------------------------------------------------------------------------------------

/** A process signal handled by {@link ProcessSignalCancellation}. */
export type ProcessSignal = "SIGINT" | "SIGTERM"

/** Options of {@link ProcessSignalCancellation}. */
export interface ProcessSignalCancellationOptions {
  /**
   * How long graceful cleanup may run after the first signal before the process is forced
   * to exit. Non-negative safe integer; defaults to 10 000 ms.
   */
  cleanupDeadlineMs?: number | undefined
}

/**
 * Opt-in bridge from SIGINT/SIGTERM to an `AbortSignal`. Construction installs both process
 * listeners (importing the SDK installs none). The first signal aborts `signal` and
 * starts the cleanup deadline; a second signal exits immediately.
 */
export declare class ProcessSignalCancellation {
  constructor(options?: ProcessSignalCancellationOptions)
  /** Aborted by the first SIGINT or SIGTERM; pass it to every evaluation. */
  get signal(): AbortSignal
  /** `130` after SIGINT, `143` after SIGTERM, otherwise `undefined`. */
  get exitCode(): number | undefined
  /** Removes both listeners and clears the deadline timer. */
  dispose(): void
}

// ---------------------------------------------------------------------------------------
// Lifecycle events
// ---------------------------------------------------------------------------------------

/** Names accepted by `on()` / `once()`. */
export type AmlEventName = "start" | "finish" | "trace"

/** Frozen event passed to `start` listeners before the tree is evaluated. */
export interface AmlEvaluationStartEvent {
  readonly runId: string
  readonly signal: AbortSignal
}

/** Frozen event passed to `finish` listeners after the tree and every resource settled. */
export interface AmlEvaluationFinishEvent {
  /** The failure; present only when `status` is `"error"`. */
  readonly error?: unknown
  /**
   * `describeFailure(error)` of a failed evaluation (`status: "error"`): a non-enumerable,
   * lazily computed member, so the event's own keys are unchanged.
   */
  readonly failure?: AmlFailure
  readonly runId: string
  readonly signal: AbortSignal
  readonly status: "ok" | "error"
  /**
   * The evaluation's summed {@link AgentUsage} (failed evaluations included); absent when no
   * provider reported usage, so the event's keys are unchanged for providers that do not.
   */
  readonly usage?: AgentUsage
}

/** The payload type of each event name. */
export interface AmlEventMap {
  start: AmlEvaluationStartEvent
  finish: AmlEvaluationFinishEvent
  trace: AmlTraceEvent
}

/**
 * The listener type for an event name. `start` and `finish` listeners are awaited; trace
 * listeners are {@link TraceSink}s that are never awaited.
 */
export type AmlEventListener<Name extends AmlEventName> = Name extends "trace"
  ? TraceSink
  : (event: AmlEventMap[Name]) => Promise<void> | void

/** Subscribe-only view of an event registry; each method returns an unsubscribe function. */
export interface AmlEventSubscriber {
  on<Name extends AmlEventName>(name: Name, listener: AmlEventListener<Name>): () => void
  once<Name extends AmlEventName>(name: Name, listener: AmlEventListener<Name>): () => void
}

// ---------------------------------------------------------------------------------------
// Trace events
// ---------------------------------------------------------------------------------------

/** Opaque correlation ids of a span inside one evaluation. */
export interface AmlTraceIdentity {
  readonly parentSpanId?: string
  readonly runId: string
  readonly spanId: string
}

/**
 * A trace attribute value. The one object value is `usage` (an {@link AgentUsage}): on an
 * `Agent` span's end, what its provider reported; on any other span's end, the total of its
 * subtree; present only when usage was reported below the span.
 */
export type AmlTraceAttribute = boolean | number | string | readonly string[] | AgentUsage

/** The kind of a trace span. */
export type AmlTraceSpanKind =
  | "evaluation"
  | "component"
  | "agent"
  | "file"
  | "system"
  | "skill"
  | "tool"
  | "loop"
  | "parallel"
  | "sandbox"
  | "script"
  | "workspace"
  | "include"

/** Names of point (`type: "event"`) trace events. */
export type AmlTraceEventName =
  | "acp.session.cancel"
  | "acp.session.created"
  | "acp.session.prompt.completed"
  | "acp.session.prompt.submitted"
  | "acp.session.update"
  | "agent.output"
  | "agent.session"
  | "capability.mcp"
  | "capability.tool"
  | "loop.transition"
  | "sandbox.process"

/** Fields shared by every trace event. */
export interface AmlTraceEventBase extends AmlTraceIdentity {
  /** Frozen, null-prototype attribute record. Sensitive values only reach content-capturing sinks. */
  readonly attributes: Readonly<Record<string, AmlTraceAttribute>>
  /** Evaluation-local counter starting at 1 with the root span start. */
  readonly sequence: number
  /** `Date.now()` when the event was produced. */
  readonly timestamp: number
}

/** A span opened. */
export interface AmlTraceSpanStartEvent extends AmlTraceEventBase {
  readonly type: "span.start"
  readonly kind: AmlTraceSpanKind
  readonly name: string
}

/** A span closed; reuses the identity of its start event. */
export interface AmlTraceSpanEndEvent extends AmlTraceEventBase {
  readonly type: "span.end"
  readonly kind: AmlTraceSpanKind
  readonly name: string
  readonly status: "ok" | "error"
  /** Non-negative elapsed milliseconds. */
  readonly durationMs: number
}

/** A point event attached to an open span. */
export interface AmlTracePointEvent extends AmlTraceEventBase {
  readonly type: "event"
  readonly name: AmlTraceEventName
}

/** A deeply frozen trace event. */
export type AmlTraceEvent = AmlTraceSpanStartEvent | AmlTraceSpanEndEvent | AmlTracePointEvent

/**
 * A trace listener. Called synchronously and in isolation; a returned promise is never
 * awaited. Set `captureContent: true` on the function to receive sensitive attributes.
 */
export interface TraceSink {
  (event: AmlTraceEvent): unknown
  /** Read once at registration; opts this sink into sensitive content. */
  readonly captureContent?: boolean
}

/** Receives each trace listener failure with the redacted event; its own failures are swallowed. */
export type TraceErrorHandler = (error: unknown, event: AmlTraceEvent) => unknown

/** Options of {@link createConsoleTracer}. */
export interface ConsoleTracerOptions {
  /** Include sensitive attributes. Defaults to `false`. */
  captureContent?: boolean | undefined
  /** Receives each complete line. Defaults to `console.log`. */
  write?: ((line: string) => unknown) | undefined
}

/** Creates a frozen sink that writes an indented, human-readable trace tree. */
export declare function createConsoleTracer(options?: ConsoleTracerOptions): TraceSink

/**
 * The structural part of an OpenTelemetry `Tracer` (`@opentelemetry/api`) that
 * {@link createOpenTelemetryTracer} needs. Any `Tracer` from `@opentelemetry/api` fits.
 */
export interface OpenTelemetryTracerLike {
  startSpan(name: string, options?: object, context?: unknown): unknown
}

/** Options of {@link createOpenTelemetryTracer}. */
export interface OpenTelemetryTracerOptions {
  /**
   * The tracer spans are created with. Defaults to the application's global tracer provider:
   * `trace.getTracer("@aml-jsx/sdk", <sdk version>)`.
   */
  tracer?: OpenTelemetryTracerLike | undefined
  /**
   * Receive AML's sensitive attributes (prompts, outputs, Tool input and output, error
   * messages) and export them, including as GenAI content attributes. Defaults to `false`.
   */
  captureContent?: boolean | undefined
}

/**
 * Creates a frozen trace sink that exports AML spans as OpenTelemetry spans: one OTel span per
 * AML span (parent from `parentSpanId`, times from the events), AML attributes under `aml.*`,
 * GenAI semantic-convention attributes on Agent (`invoke_agent`) and Tool (`execute_tool`)
 * spans, point events as span events, failures as `ERROR` status with an `exception` event.
 * The root span is a child of the OTel context active when `runtime.evaluate()` was called,
 * and components, provider calls and Tool executors run with their AML span active.
 *
 * Synchronous: it loads the optional peer dependency `@opentelemetry/api` on the first call
 * (never at import) and throws an `Error` naming the package when it is not installed.
 * Throws `TypeError` for an invalid `captureContent` or `tracer`. See docs/OBSERVABILITY.md.
 */
export declare function createOpenTelemetryTracer(options?: OpenTelemetryTracerOptions): TraceSink

// ---------------------------------------------------------------------------------------
// Agent provider contract
// ---------------------------------------------------------------------------------------

/** Effective portable permissions requested from an Agent harness. */
export interface AgentPermissions {
  readonly filesystem: "read-only" | "read-write"
  readonly network: boolean
  readonly shell: boolean
}

/** Permission overrides authored on `<Agent permissions>`. */
export type AgentPermissionOverrides = Partial<AgentPermissions>

/** Context handed to a JavaScript Tool's `execute()`. */
export interface AgentToolExecutionContext {
  readonly signal: AbortSignal
  readonly trace: AmlTraceIdentity
}

/** A JavaScript Tool as an Agent provider sees it. */
export interface AgentJavaScriptTool {
  readonly description: string
  execute(input: unknown, context: AgentToolExecutionContext): Promise<AmlJsonValue>
  /** Frozen draft 2020-12 JSON Schema of the input. */
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly kind: "javascript"
  readonly name: string
}

/** Any Tool an Agent provider may receive. */
export type AgentTool = AgentJavaScriptTool

/**
 * A Tool created by `defineTool()`; only that exact identity is accepted by `<Tool use>`.
 *
 * It is also callable: `tool(input)` runs it from inside an active AML component, through
 * the same input/output validation as an Agent's calls, as a `tool` span under the calling
 * component. Outside an active component (including inside provider `run()` and Tool
 * executors) the call throws `EvaluationError("Tools can only be called while an AML
 * component is active")` synchronously. `execute(input, context)` is the low-level form for
 * provider and test infrastructure and needs no active component. It is inherited from a
 * prototype shared by every Tool (not an own member), and rejects with a `TypeError` when
 * called on anything but the Tool itself (an `Object.create(tool)` derivative, a detached
 * method).
 */
export interface AmlTool<Input = any, Output = unknown> extends AgentJavaScriptTool {
  (input: Input): Promise<Output>
  readonly __amlTool: true
}

/** A Tool input schema: Standard Schema plus Standard JSON Schema (see {@link AmlModelSchema}). */
export type AmlToolSchema<Input = unknown, Output = Input> = AmlModelSchema<Input, Output>

/** What a Tool executor returns: the output schema's input, or plain JSON without one. */
type ToolExecuteResult<OutputSchema> = OutputSchema extends StandardSchemaV1
  ? StandardSchemaV1.InferInput<OutputSchema>
  : AmlJsonValue

/** Options of {@link defineTool}. Each member is read once. */
export interface DefineToolOptions<
  InputSchema extends AmlToolSchema,
  OutputSchema extends StandardSchemaV1 | undefined = undefined,
> {
  /** Non-empty, already trimmed; unique per `<Agent>`. */
  readonly name: string
  /** Non-empty, already trimmed; shown to the model. */
  readonly description: string
  /** Validates (and may transform) the input; its draft 2020-12 JSON Schema is sent to models. */
  readonly input: InputSchema
  /** Optional Standard Schema applied to the executor's result (no JSON Schema needed). */
  readonly output?: OutputSchema
  /**
   * Runs only with valid input (the input schema's output). The result must be JSON after
   * the output schema: it is snapshotted into deeply frozen data.
   */
  execute(
    input: StandardSchemaV1.InferOutput<InputSchema>,
    context: AgentToolExecutionContext,
  ): ToolExecuteResult<OutputSchema> | PromiseLike<ToolExecuteResult<OutputSchema>>
}

/**
 * Defines a JavaScript Tool. Validates the options synchronously (`TypeError`s) and returns
 * a frozen, callable {@link AmlTool} registered by identity for `<Tool use>`.
 */
export declare function defineTool<
  InputSchema extends AmlToolSchema,
  OutputSchema extends StandardSchemaV1 | undefined = undefined,
>(
  options: DefineToolOptions<InputSchema, OutputSchema>,
): AmlTool<
  StandardSchemaV1.InferInput<InputSchema>,
  OutputSchema extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<OutputSchema> : AmlJsonValue
>

/** A stdio MCP transport. */
export interface AmlMcpStdioTransport {
  readonly type: "stdio"
  readonly command: string
  readonly args?: readonly string[]
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
}

/** A Streamable HTTP MCP transport. */
export interface AmlMcpStreamableHttpTransport {
  readonly type: "streamable-http"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
}

/** A validated MCP transport. */
export type AmlMcpTransport = AmlMcpStdioTransport | AmlMcpStreamableHttpTransport

/** A frozen MCP server descriptor created by `defineMcpServer()`. */
export interface AmlMcpServer {
  readonly __amlMcpServer: true
  readonly name: string
  readonly transport: AmlMcpTransport
}

/** Options of {@link defineMcpServer}: a normalized name and one transport. Each member is read once. */
export interface DefineMcpServerOptions {
  readonly name: string
  readonly transport: DefineMcpStdioTransport | DefineMcpStreamableHttpTransport
}

/** A stdio transport as authored; `args` and `env` are copied. */
export interface DefineMcpStdioTransport {
  readonly type: "stdio"
  readonly command: string
  readonly args?: readonly string[]
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
}

/** A Streamable HTTP transport as authored; a `URL` becomes its `href`, `headers` are copied. */
export interface DefineMcpStreamableHttpTransport {
  readonly type: "streamable-http"
  readonly url: string | URL
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * Validates, copies and freezes an MCP server descriptor for `<Mcp use>`, without any I/O.
 * Throws a `TypeError` naming the invalid or unreadable field.
 */
export declare function defineMcpServer(options: DefineMcpServerOptions): Readonly<AmlMcpServer>

/** An MCP grant as an Agent provider receives it. */
export type AgentMcpServer =
  | { readonly kind: "named"; readonly name: string }
  | { readonly kind: "configured"; readonly definition: AmlMcpServer }

/** Asks the provider for structured JSON output matching `jsonSchema`. */
export interface AgentOutputRequest {
  readonly jsonSchema: Readonly<Record<string, AmlJsonValue>>
  readonly type: "json"
}

/** The deeply frozen, fully resolved plan of one `<Agent>` session. */
export interface AgentRequest {
  /** Later turns in order; omitted when there are none. */
  readonly followUps?: readonly string[]
  readonly mcpServers: readonly AgentMcpServer[]
  /** Present only when the `model` prop was given. */
  readonly model?: string
  /** Present only for structured evaluations. */
  readonly output?: AgentOutputRequest
  readonly permissions: AgentPermissions
  readonly prompt: string
  /**
   * Skill packages (`<Skill src>` naming a directory with SKILL.md) staged for this call
   * only; omitted when there are none. Providers with native skill discovery register
   * `path`; every provider also sees the metadata-only fallback text in the prompt.
   */
  readonly skills?: readonly AgentSkill[]
  readonly system: string
  readonly tools: readonly AgentTool[]
  readonly trace?: AmlTraceIdentity
}

/** A staged Skill package: SKILL.md `name` and `description`, and the staged directory. */
export interface AgentSkill {
  readonly name: string
  readonly description: string
  /** Absolute, invocation-private directory; removed when the provider call settles. */
  readonly path: string
}

/**
 * Token usage a provider reports for one Agent session (every turn). Each field is optional
 * and, when present, a non-negative safe integer; a bad value fails the Agent with an
 * `EvaluationError` (`Agent <spanId> usage.<field> must be a non-negative safe integer`, or
 * `Agent <spanId> usage must be an object`) and is never summed.
 */
export interface AgentUsage {
  readonly inputTokens?: number
  readonly outputTokens?: number
  /** What `maxTokens` counts; without it, `inputTokens + outputTokens` is counted. */
  readonly totalTokens?: number
  /** Part of `inputTokens` served from a cache. */
  readonly cachedInputTokens?: number
  /** Part of `outputTokens` spent on reasoning. */
  readonly reasoningTokens?: number
}

/** What a provider returns for one session: the final text and, when asked, structured output. */
export interface AgentResponse {
  structured?: unknown
  text: string
  /** Token usage of the session; `undefined`/`null` is "not reported". */
  usage?: AgentUsage | null
}

/** Frozen per-call context of `AgentProvider.run()`. */
export interface AgentExecutionContext {
  /** Evaluation-local subscriber; closes when the evaluation finishes. */
  readonly events: AmlEventSubscriber
  /** The effective Sandbox session, when one is active. */
  readonly sandbox?: SandboxSession
  readonly signal: AbortSignal
  readonly trace: AmlTraceIdentity
}

/**
 * Runs one authored `<Agent>` session (all its turns) and returns the final response.
 * Must reject a pre-aborted signal with its reason and release its resources before settling.
 */
export interface AgentProvider {
  readonly name: string
  run(request: AgentRequest, context: AgentExecutionContext): Promise<AgentResponse>
  /** Must return exactly `true` to run inside the given Sandbox session. */
  supportsSandbox?(sandbox: SandboxSession): boolean
}

// ---------------------------------------------------------------------------------------
// ACP Agents (defineAcpAgentProvider; docs/ACP.md)
// ---------------------------------------------------------------------------------------

/**
 * An ACP `McpServer` descriptor as sent in `session/new` (the `@agentclientprotocol/sdk`
 * 1.3.0 shape, declared here so the package has no runtime dependency on the SDK).
 */
export type AcpMcpServer =
  | {
      readonly type: "http" | "sse"
      readonly name: string
      readonly url: string
      readonly headers: readonly { readonly name: string; readonly value: string }[]
    }
  | {
      readonly name: string
      readonly command: string
      readonly args: readonly string[]
      readonly env: readonly { readonly name: string; readonly value: string }[]
    }

/** ACP `PermissionOptionKind`: the option a launch's permission policy selects. */
export type AcpPermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always"

/** The ACP session a launch's `transformText` is told about. */
export interface AcpActiveSession {
  readonly sessionId: string
}

/** A file written into the invocation's private state directory before the agent starts. */
export interface AcpAgentLaunchFile {
  /** UTF-8 text. */
  readonly content: string
  /** Mode 0700 instead of 0600. */
  readonly executable?: boolean
  /**
   * A normalized relative path inside the state directory.
   * @throws {TypeError} `ACP Agent launch file path must be a normalized relative path`,
   *   `ACP Agent launch file path must remain inside its state directory`.
   */
  readonly path: string
}

/** What a profile's `createLaunch` is given (frozen). */
export interface AcpAgentLaunchContext {
  /** The bridge's MCP server name; absent while this build has no MCP bridge. */
  readonly amlMcpServerName?: string
  /** The real path the agent runs in and the `session/new` cwd. */
  readonly cwd: string
  /** `true` locally: the child starts from `process.env`. */
  readonly inheritsProcessEnvironment: boolean
  /** The request's configured MCP servers as ACP descriptors. */
  readonly mcpServers: readonly AcpMcpServer[]
  readonly request: AgentRequest
  /** A private (0700) directory of this invocation, removed after the agent is gone. */
  readonly stateDirectory: string
}

/** How to start and drive one ACP agent process. */
export interface AcpAgentLaunch {
  readonly command: string
  readonly args?: readonly string[]
  /** Merged over `process.env` locally. */
  readonly env?: Readonly<Record<string, string>>
  /** Sent as `authenticate { methodId }` after `initialize`. */
  readonly authenticationMethodId?: string
  /** `session/set_config_option` requests, in order, by option category or id. */
  readonly configuration?: readonly (
    | { readonly category: string; readonly value: boolean | string }
    | { readonly id: string; readonly value: boolean | string }
  )[]
  readonly files?: readonly AcpAgentLaunchFile[]
  /** Prepended to the first turn as `${prefix}\n\n${prompt}`. */
  readonly initialPromptPrefix?: string
  /** How `session/request_permission` is answered (default `"reject_once"`). */
  readonly permissionPolicy: AcpPermissionOptionKind
  /** Replaces the MCP servers sent in `session/new`. */
  readonly sessionMcpServers?: readonly AcpMcpServer[]
  /**
   * How long each start-up request (`initialize`, `authenticate`, `session/new`,
   * `session/set_config_option`) may go unanswered, in milliseconds (default 60000). The run
   * then fails with `ACP Agent did not answer <method> within <ms> ms` and the agent's process
   * tree is killed. Turns are not bounded: the evaluation's signal ends them.
   */
  readonly startupTimeoutMs?: number
  /** Appended to a structured final turn (default: AML's `aml_submit_result` instruction). */
  readonly structuredOutputInstruction?: string
  /** Rewrites each turn's concatenated message text. */
  readonly transformText?: (text: string, session: AcpActiveSession) => string
}

/** An ACP Agent profile: a name, a working directory and how to launch the agent. */
export interface AcpAgentProfile<Name extends string = string> {
  readonly name: Name
  /** The local cwd (`realpath`ed); `process.cwd()` when undefined. */
  readonly workingDirectory: string | undefined
  createLaunch(context: AcpAgentLaunchContext): AcpAgentLaunch
  /** Whether a provider-native `<Mcp name>` server is known to this agent. */
  supportsNamedMcpServer?(name: string): boolean
}

/**
 * An Agent provider that drives an ACP agent process (newline-delimited JSON-RPC over its
 * stdio): `initialize`, optional `authenticate`, `session/new`, configuration, one
 * `session/prompt` per turn, permission answers by policy, `session/cancel` on abort, and an
 * ordered cleanup that kills and reaps the agent's process tree.
 *
 * @throws {TypeError} `ACP Agent profile must be an object`, `ACP Agent profile name must be
 *   a non-empty normalized string`, `ACP Agent profile createLaunch must be a function`, …
 *   (docs/ACP.md lists them all).
 */
export declare function defineAcpAgentProvider<const Name extends string>(
  profile: AcpAgentProfile<Name>,
): Readonly<AgentProvider & { readonly name: Name }>

/** Codex reasoning effort (`model_reasoning_effort`). */
export type CodexReasoningEffort = "minimal" | "low" | "medium" | "high" | "xhigh"
/** A JSON value in Codex configuration. */
export type CodexConfigValue = string | number | boolean | null | readonly CodexConfigValue[] | { readonly [key: string]: CodexConfigValue }

/** Options of {@link codexAgent}. */
export interface CodexAgentOptions {
  /** Adds `CODEX_API_KEY` and selects the ACP `api-key` authentication method. */
  readonly apiKey?: string
  /** Appended to the launch command as given. */
  readonly args?: readonly string[]
  /** The ACP adapter (default `"codex-acp"`). */
  readonly command?: string
  /** `CODEX_PATH` for the adapter (default `"codex"`). */
  readonly codexPathOverride?: string
  /** Base Codex configuration; AML-owned keys are written over it. */
  readonly config?: Readonly<Record<string, CodexConfigValue>>
  readonly env?: Readonly<Record<string, string>>
  /** Provider-level model fallback (`<Agent model>` wins). */
  readonly model?: string
  readonly reasoningEffort?: CodexReasoningEffort
  /** Local working directory (default `process.cwd()`). */
  readonly workingDirectory?: string
}
/** The provider returned by {@link codexAgent}. */
export type CodexAgentProvider = Readonly<AgentProvider & { readonly name: "codex" }>
/**
 * Codex over `codex-acp`: private `CODEX_HOME`/`CODEX_SQLITE_HOME`/logs, `CODEX_CONFIG` with
 * the model, reasoning effort and system text (`developer_instructions`), filesystem mode
 * as `INITIAL_AGENT_MODE`. The package never installs the agent.
 * @throws {TypeError} `Codex Agent options must be an object`, `Codex <option> must be a
 *   non-empty normalized string`, `Codex args must be strings without null bytes`, `Codex
 *   env must be an object`, `Codex config must be an object`, `Codex config must be JSON
 *   serializable`, `Codex reasoningEffort is unsupported`.
 */
export declare function codexAgent(options?: CodexAgentOptions): CodexAgentProvider

/** Copilot reasoning effort (`--reasoning-effort`). */
export type CopilotReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max"
/** Options of {@link copilotAgent}. */
export interface CopilotAgentOptions {
  /** Placed before AML's flags. */
  readonly args?: readonly string[]
  /** The Copilot CLI (default `"copilot"`). */
  readonly command?: string
  readonly env?: Readonly<Record<string, string>>
  /** Default `"auto"`. */
  readonly model?: string
  readonly reasoningEffort?: CopilotReasoningEffort
  readonly workingDirectory?: string
}
/** The provider returned by {@link copilotAgent}. */
export type CopilotAgentProvider = Readonly<AgentProvider & { readonly name: "copilot" }>
/**
 * GitHub Copilot CLI over `copilot --acp` with private `COPILOT_HOME`/`HOME`,
 * non-interactive flags, AML permissions as deny rules and tool exclusions, and the system
 * text as a first-turn `<SYSTEM>` prelude.
 * @throws {TypeError} `Copilot Agent options must be an object`, `Copilot <option> must be a
 *   non-empty normalized string`, `Copilot args must be strings without null bytes`,
 *   `Copilot env must be an object`, `Copilot reasoningEffort is unsupported`.
 */
export declare function copilotAgent(options?: CopilotAgentOptions): CopilotAgentProvider

/** Options of {@link glmAgent}. */
export interface GlmAgentOptions {
  /** `Z_AI_API_KEY`, and the `z-ai-api-key` authentication method. */
  readonly apiKey?: string
  readonly args?: readonly string[]
  /** `ACP_GLM_BASE_URL`. */
  readonly baseUrl?: string
  /** Default `"glm-acp-agent"`. */
  readonly command?: string
  readonly env?: Readonly<Record<string, string>>
  /** `ACP_GLM_MAX_TOKENS`, a positive safe integer. */
  readonly maxTokens?: number
  /** `ACP_GLM_MODEL` fallback. */
  readonly model?: string
  readonly workingDirectory?: string
}
/** The provider returned by {@link glmAgent}. */
export type GlmAgentProvider = Readonly<AgentProvider & { readonly name: "glm" }>
/**
 * GLM through the community `glm-acp-agent` adapter with a private `ACP_GLM_SESSION_DIR`.
 * @throws {TypeError} `GLM Agent options must be an object`, `GLM <option> must be a
 *   non-empty normalized string`, `GLM args must be strings without null bytes`, `GLM env
 *   must be an object`, `GLM maxTokens must be a positive safe integer`.
 */
export declare function glmAgent(options?: GlmAgentOptions): GlmAgentProvider

/** OpenCode configuration (JSON; the `@opencode-ai/sdk` `Config` shape). */
export type OpenCodeConfig = { readonly [key: string]: unknown }
/** Options of {@link opencodeAgent}. */
export interface OpenCodeAgentOptions {
  /** Appended after `acp --pure --cwd <cwd>`. */
  readonly args?: readonly string[]
  /** Default `"opencode"`. */
  readonly command?: string
  /** Captured as JSON at creation. */
  readonly config?: OpenCodeConfig
  /** Local working directory (default `process.cwd()`). */
  readonly directory?: string
  readonly env?: Readonly<Record<string, string>>
  /** Model fallback after `<Agent model>`, before `config.model`. */
  readonly model?: string
}
/** The provider returned by {@link opencodeAgent}. */
export type OpenCodeAgentProvider = Readonly<AgentProvider & { readonly name: "opencode" }>
/**
 * OpenCode over `opencode acp --pure` with a private database and XDG directories and an
 * AML-owned primary agent whose tools and permissions follow the request's permissions.
 * @throws {TypeError} `OpenCode Agent options must be an object`, `OpenCode <option> must be
 *   a non-empty normalized string`, `OpenCode args must be strings without null bytes`,
 *   `OpenCode env must be an object`, `OpenCode config must be an object`, `OpenCode config
 *   must contain only finite JSON numbers`, `… only JSON values`, `… must not contain cycles`.
 */
export declare function opencodeAgent(options?: OpenCodeAgentOptions): OpenCodeAgentProvider

/** Pi's reasoning levels (the ACP `thought_level` configuration value). */
export type PiThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max"
/** Options of {@link piAgent}. */
export interface PiAgentOptions {
  /** Extra arguments of the ACP executable, passed exactly as supplied. */
  readonly args?: readonly string[]
  /** The ACP executable AML spawns. Default `"pi-acp"`. */
  readonly command?: string
  /** Provider credentials and native environment, copied into the launch environment. */
  readonly env?: Readonly<Record<string, string>>
  /**
   * The `pi-mcp-adapter` entry point, used for AML Tools, MCP servers and structured output.
   * Default: `pi-mcp-adapter` resolved from `process.cwd()` (local launch only).
   */
  readonly mcpAdapterPath?: string
  /** Model fallback (`session/set_config_option` category `model`); `<Agent model>` wins. */
  readonly model?: string
  /** The native Pi executable, run directly or through the generated wrapper. Default `"pi"`. */
  readonly piCommand?: string
  /** Pi's `thought_level` session configuration value. */
  readonly thinkingLevel?: PiThinkingLevel
  /** Local working directory when no Sandbox supplies the cwd (default `process.cwd()`). */
  readonly workingDirectory?: string
}
/** The provider returned by {@link piAgent}. */
export type PiAgentProvider = Readonly<AgentProvider & { readonly name: "pi" }>
/**
 * Pi through `pi-acp` with a private `HOME`, agent and session directories. Narrowed
 * permissions become Pi's `--tools` allowlist in a generated `pi-for-aml` wrapper; AML Tools,
 * MCP servers and structured output go through `pi-mcp-adapter` (`agent/mcp.json`).
 * @throws {TypeError} `Pi Agent options must be an object`, `Pi ACP command|Pi command|Pi
 *   model|Pi MCP adapter path|Pi workingDirectory must be a non-empty normalized string`,
 *   `Pi ACP args must be strings without null bytes`, `Pi env must be an object`, `Pi
 *   thinkingLevel is unsupported`.
 */
export declare function piAgent(options?: PiAgentOptions): PiAgentProvider

// ---------------------------------------------------------------------------------------
// Agent provider authoring
// ---------------------------------------------------------------------------------------

/**
 * Validates an Agent provider (the same TypeErrors the runtime raises) and returns the same
 * object shallow-frozen. Private `#fields` of a class instance keep working.
 *
 * @throws {TypeError} `Agent provider must be an object`, `Agent provider name must be a
 *   non-empty string`, `Agent provider name must already be normalized`, `Agent provider run
 *   must be a function`, `Agent provider supportsSandbox must be a function when provided`.
 */
export declare function defineAgentProvider<const Provider extends AgentProvider>(
  implementation: Provider,
): Readonly<Provider>

/** One turn of a retained provider session: the prompt, then each follow-up in order. */
export interface AgentProviderTurn {
  /** 0-based position in the session. */
  readonly index: number
  /** True for the last turn, whose response is the session's answer. */
  readonly isFinal: boolean
  /** The structured-output request; present only on the final turn of a structured Agent. */
  readonly output?: AgentOutputRequest
  readonly prompt: string
}

/** A provider-owned session that runs the turns of one `<Agent>` and is always closed. */
export interface AgentProviderSession {
  /** Called at most once, when the evaluation signal aborts while the session is running. */
  abort?(): Promise<void>
  /** Releases every resource of the session; called after success and failure alike. */
  close(): Promise<void>
  /** Runs one turn; the final turn's response is the session's response. */
  runTurn(turn: AgentProviderTurn, context: AgentExecutionContext): Promise<AgentResponse>
}

/**
 * Template for a provider that retains one session per `<Agent>`. `run()` builds the turns,
 * rejects a pre-aborted signal with its reason, opens the `agent.session` span, awaits
 * {@link AbstractAgentProvider.openSession} and then runs the session with
 * {@link executeAgentProviderSession}. Spans are emitted only for contexts created by AML.
 */
export declare abstract class AbstractAgentProvider<Name extends string = string> implements AgentProvider {
  readonly name: Name
  protected constructor(name: Name)
  /** Returns `false`: a subclass must opt in to every Sandbox it can actually run inside. */
  supportsSandbox(sandbox: SandboxSession): boolean
  run(request: AgentRequest, context: AgentExecutionContext): Promise<AgentResponse>
  /** Opens the provider session for one Agent call. */
  protected abstract openSession(
    request: AgentRequest,
    context: AgentExecutionContext,
  ): Promise<AgentProviderSession>
}

/**
 * The frozen turns `[prompt, ...followUps]` of `request`. Only the final turn carries
 * `request.output`.
 *
 * @throws {TypeError} `Agent provider "<name>" followUps must be an array` and
 *   `Agent provider "<name>" followUps must contain non-empty strings`.
 */
export declare function createAgentProviderTurns(
  request: AgentRequest,
  providerName: string,
): readonly AgentProviderTurn[]

/**
 * Runs `turns` in order on `session` and closes it. An abort of `context.signal` is
 * forwarded once to `session.abort()`; each turn runs inside an `agent.turn` span and
 * `close()` inside an `agent.cleanup` span. Errors are reported in the order execution,
 * abort, cleanup: one is rethrown as is, several become an `AggregateError`
 * (`Agent provider "<name>" session execution and cleanup failed`).
 *
 * @throws {TypeError} when the session is malformed (after closing it when `close` is usable).
 * @throws {Error} `Agent provider "<name>" session produced no response`.
 */
export declare function executeAgentProviderSession(
  session: AgentProviderSession,
  turns: readonly AgentProviderTurn[],
  context: AgentExecutionContext,
  providerName: string,
): Promise<AgentResponse>

// ---------------------------------------------------------------------------------------
// Sandbox provider contract
// ---------------------------------------------------------------------------------------

/** Portable filesystem authority of a Sandbox. */
export type SandboxAccess = "read-only" | "read-write"

/** Options of one Sandbox command or process. */
export interface SandboxExecOptions {
  cwd?: string
  env?: Readonly<Record<string, string>>
  signal?: AbortSignal
  timeoutMs?: number
}

/** Result of `SandboxRuntime.exec()`. A non-zero exit is a result, not an error. */
export interface SandboxExecResult {
  readonly exitCode: number
  readonly stderr: string
  readonly stdout: string
}

/** Exit of a spawned Sandbox process. */
export interface SandboxProcessExit {
  readonly exitCode: number
}

/** A long-lived Sandbox process with Web streams. */
export interface SandboxProcess {
  readonly id: string
  readonly stdin: WritableStream<Uint8Array>
  readonly stdout: ReadableStream<Uint8Array>
  readonly stderr: ReadableStream<Uint8Array>
  /** Safe to call repeatedly. */
  kill(): Promise<void>
  /** Resolves with the same exit on every call. */
  wait(): Promise<SandboxProcessExit>
}

/** The provider-neutral command runtime of a Sandbox lease. */
export interface SandboxRuntime {
  readonly access: SandboxAccess
  readonly cwd: string
  readonly root: string
  exec(command: string, args?: readonly string[], options?: SandboxExecOptions): Promise<SandboxExecResult>
  spawn(command: string, args?: readonly string[], options?: SandboxExecOptions): Promise<SandboxProcess>
}

/** Options of {@link spawnLocalProcess}. */
export interface LocalProcessOptions {
  /** Runs before the process tree is terminated by `kill()` (once; `kill()` is memoised). */
  beforeKill?: () => Promise<void> | void
  /** Working directory of the process; also its `PWD`. */
  cwd: string
  /** Added to (and overriding) `process.env` for the child. */
  env?: Readonly<Record<string, string>>
  /** Aborting it kills the process tree; `wait()` then rejects with `signal.reason`. */
  signal: AbortSignal
  /** Kills the process tree when it is still running after this many milliseconds. */
  timeoutMs?: number
}

/**
 * Starts a host process as the leader of its own process group, with env
 * `{...process.env, ...env, PWD: cwd}` and piped stdio as Web streams. The id is
 * `"local-process:<pid>"`. `kill()` runs `beforeKill`, then terminates the whole tree
 * (SIGTERM, a 2 s grace period, SIGKILL) and resolves once every member is reaped; several
 * failures reject with `AggregateError("Process cleanup failed")`. `wait()` is memoised and
 * rejects with `signal.reason` after an abort and with
 * `Error("Local process exited from signal <NAME>")` when a signal ended the process.
 *
 * @throws `signal.reason` when already aborted; Node's spawn error (`code: "ENOENT"`, …) when
 *   the process cannot start; `Error("Local process transport failed to create process
 *   pipes")` when its pipes cannot be set up.
 */
export declare function spawnLocalProcess(
  command: string,
  args: readonly string[],
  options: LocalProcessOptions,
): Promise<SandboxProcess>

/** Frozen request for one outer Sandbox lease. */
export interface SandboxAcquireRequest {
  readonly access: SandboxAccess
  readonly cwd: string
  readonly evaluationId: string
  readonly root: string
  readonly signal: AbortSignal
  /** The active Workspace materialization, when there is one. */
  readonly workspace?: WorkspaceMaterializationReference
}

/** A lease returned by `SandboxProvider.acquire()`; AML calls `release()` exactly once. */
export interface SandboxLease<Handle = unknown> {
  handle: Handle
  id: string
  runtime: SandboxRuntime
  release(): Promise<void>
}

/** The descendant-visible part of a lease (no release authority). */
export interface SandboxLeaseReference<Handle = unknown> {
  readonly handle: Handle
  readonly id: string
  readonly runtime: SandboxRuntime
}

/** Names the provider that owns a Sandbox session. */
export interface SandboxProviderReference {
  readonly name: string
}

/** The effective Sandbox view given to descendants and compatible Agent providers. */
export interface SandboxSession<Handle = unknown> {
  readonly access: SandboxAccess
  readonly cwd: string
  readonly lease: SandboxLeaseReference<Handle>
  readonly nested: boolean
  readonly provider: SandboxProviderReference
  readonly root: string
}

/** Acquires ephemeral execution leases for outer `<Sandbox>` scopes. */
export interface SandboxProvider<Handle = unknown> {
  readonly name: string
  acquire(request: SandboxAcquireRequest): Promise<SandboxLease<Handle>>
}

/** What `AbstractSandboxProvider.provision()` returns: the lease identity and its resource. */
export interface ProvisionedSandbox<Handle = unknown, Resource = unknown> {
  readonly handle: Handle
  readonly id: string
  readonly resource: Resource
}

/**
 * True iff `session.lease.runtime` has `exec` and `spawn` functions and the same `root` and
 * `access` as the session. Never throws (an unreadable session answers `false`). A nested
 * `<Sandbox>` that narrows root or access therefore fails it; narrowing only cwd passes.
 */
export declare function supportsSandboxRuntime(session: SandboxSession): boolean

/**
 * Validates a Sandbox provider (the `AmlRuntime` `sandboxProvider` TypeErrors) and returns
 * the same object shallow-frozen.
 *
 * @throws {TypeError} `Sandbox provider must be an object`, `Sandbox provider name must be a
 *   non-empty string`, `Sandbox provider name must already be normalized`, `Sandbox provider
 *   acquire must be a function`.
 */
export declare function defineSandboxProvider<const Provider extends SandboxProvider>(
  implementation: Provider,
): Readonly<Provider>

/**
 * Template for a staged Sandbox provider. `acquire()` rejects an aborted signal, awaits
 * `provision`, checks the signal, `createRuntime`, `initialize`, checks the signal again and
 * returns a frozen lease whose `release()` runs `releaseResource` once (memoised). A failure
 * after provisioning runs `cleanupProvisioned` first; if that fails too the result is an
 * `AggregateError` `Sandbox provider "<name>" acquisition and cleanup failed`.
 */
export declare abstract class AbstractSandboxProvider<Name extends string = string, Handle = unknown, Resource = unknown>
  implements SandboxProvider<Handle>
{
  readonly name: Name
  protected constructor(name: Name)
  acquire(request: SandboxAcquireRequest): Promise<SandboxLease<Handle>>
  /** Creates (or connects to) the environment of one lease. */
  protected abstract provision(request: SandboxAcquireRequest): Promise<ProvisionedSandbox<Handle, Resource>>
  /** The command runtime of a provisioned environment. */
  protected abstract createRuntime(
    provisioned: ProvisionedSandbox<Handle, Resource>,
    request: SandboxAcquireRequest,
  ): SandboxRuntime | Promise<SandboxRuntime>
  /** Optional preparation once the runtime exists; a no-op by default. */
  protected initialize(
    provisioned: ProvisionedSandbox<Handle, Resource>,
    runtime: SandboxRuntime,
    request: SandboxAcquireRequest,
  ): Promise<void>
  /** Releases the environment; run at most once per lease. */
  protected abstract releaseResource(
    provisioned: ProvisionedSandbox<Handle, Resource>,
    request: SandboxAcquireRequest,
  ): Promise<void>
  /** Compensation when acquisition fails after provisioning; defaults to `releaseResource`. */
  protected cleanupProvisioned(
    provisioned: ProvisionedSandbox<Handle, Resource>,
    request: SandboxAcquireRequest,
  ): Promise<void>
}

/** A validated, frozen command for a Sandbox runtime. */
export declare class SandboxCommand {
  private constructor()
  readonly args: readonly string[]
  readonly command: string
  /** Normalized relative logical cwd inside the request root; defaults to `request.cwd`. */
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** `options.signal`, else `request.signal`. */
  readonly signal: AbortSignal
  readonly timeoutMs?: number
  /**
   * @throws the signal's reason when it is already aborted.
   * @throws {TypeError} `Sandbox command must be a non-empty string without null bytes`,
   *   `Sandbox command arguments must be strings without null bytes`, `Sandbox command options
   *   must be an object`, `Sandbox command cwd must be a normalized relative forward-slash path`,
   *   `Sandbox command cwd resolves outside its configured root`, `Sandbox command environment
   *   must be an object`, `Sandbox command environment contains an invalid entry`.
   * @throws {RangeError} `Sandbox command timeoutMs must be a positive timer-safe integer`.
   */
  static from(
    request: Pick<SandboxAcquireRequest, "cwd" | "root" | "signal">,
    command: string,
    args?: readonly string[],
    options?: SandboxExecOptions,
  ): SandboxCommand
}

/** Options of {@link localSandbox}. */
export interface LocalSandboxOptions {
  /** Shared stdout+stderr byte budget of one command; defaults to 4 MiB. */
  maxOutputBytes?: number
  /** Trusted shell command run with `sh -lc` in the root on every acquisition. */
  setup?: string
  /** Fallback directory when no `<Workspace>` is active; resolved when the factory runs. */
  workspace?: string
}

/**
 * A Sandbox provider named `"local"` that runs trusted host processes inside the active
 * Workspace directory (or `options.workspace`); the lease handle's `directory` is that real
 * directory. Not an isolation boundary: every `exec()` and
 * `spawn()` rejects under read-only access because host processes cannot enforce it.
 *
 * @throws {TypeError} `Local Sandbox options must be an object`, `Local Sandbox setup must be
 *   a non-empty normalized string`, `Local Sandbox workspace must be a non-empty normalized string`.
 * @throws {RangeError} `Local Sandbox maxOutputBytes must be a positive safe integer`.
 */
export declare function localSandbox(
  options?: LocalSandboxOptions,
): Readonly<SandboxProvider<{ readonly directory: string; readonly kind: "local" }>>

// ---------------------------------------------------------------------------------------
// Workspace provider contract
// ---------------------------------------------------------------------------------------

/** Which revision to materialize and which paths to restore. */
export interface WorkspaceLoadRequest {
  readonly exclude: readonly string[]
  readonly include?: readonly string[]
  readonly revision: "current" | (string & {})
}

/** Frozen request for one Workspace materialization. */
export interface WorkspaceAcquireRequest {
  readonly evaluationId: string
  readonly id: string
  readonly load?: false | WorkspaceLoadRequest
  readonly lock?: boolean
  readonly save?: boolean
  readonly signal: AbortSignal
}

/** Frozen request to publish the materialization as a revision. */
export interface WorkspaceSaveRequest {
  readonly exclude: readonly string[]
  readonly gitignore: boolean
  readonly include?: readonly string[]
  readonly outcome: "failure" | "success"
  readonly retention: number
  readonly signal: AbortSignal
}

/** A materialized Workspace; AML saves (per policy) and then releases it exactly once. */
export interface WorkspaceLease<Handle = unknown> {
  directory: string
  handle: Handle
  id: string
  release(): Promise<void>
  save(request?: WorkspaceSaveRequest): Promise<void>
}

/** Names the provider that owns a Workspace materialization. */
export interface WorkspaceProviderReference {
  readonly name: string
}

/** The descendant-visible Workspace materialization (no save or release authority). */
export interface WorkspaceMaterializationReference<Handle = unknown> {
  readonly cwd: string
  readonly directory: string
  readonly handle: Handle
  readonly leaseId: string
  readonly provider: WorkspaceProviderReference
  readonly workspaceId: string
  readonly writeConcurrency: "serial" | "parallel"
}

/** Acquires durable Workspace materializations. */
export interface WorkspaceProvider<Handle = unknown> {
  readonly name: string
  acquire(request: WorkspaceAcquireRequest): Promise<WorkspaceLease<Handle>>
}

/**
 * Validates a Workspace provider (the `AmlRuntime` `workspaceProvider` TypeErrors) and
 * returns the same object shallow-frozen. Performs no I/O.
 *
 * @throws {TypeError} `Workspace provider must be an object`, `Workspace provider name must
 *   be a non-empty string`, `Workspace provider name must already be normalized`, `Workspace
 *   provider acquire must be a function`.
 */
export declare function defineWorkspaceProvider<const Provider extends WorkspaceProvider>(
  provider: Provider,
): Readonly<Provider>

// ---------------------------------------------------------------------------------------
// Workspace persistence and stores (docs/WORKSPACE-PERSISTENCE.md)
// ---------------------------------------------------------------------------------------

/** How a revision is stored: one AML-owned `tar.gz`, or one object per file plus a manifest. */
export type WorkspacePersistenceFormat = "archive" | "folder"

/** One retained revision in `workspace.json`. */
export interface WorkspaceRevision {
  /** `Date.prototype.toISOString()` of the save; round-trips exactly. */
  readonly createdAt: string
  readonly format: WorkspacePersistenceFormat
  readonly id: string
  /** `revisions/<id>.tar.gz` (archive) or `revisions/<id>/` (folder). */
  readonly path: string
}

/** `workspace.json`: the authoritative current revision and retained history (newest first). */
export interface WorkspaceIndex {
  readonly version: 1
  readonly current: string
  readonly revisions: readonly WorkspaceRevision[]
}

/** An opaque object version (SHA-256 hex for the filesystem store, an ETag for S3). */
export interface WorkspaceStorageVersion {
  readonly value: string
}

/** A stored object: a streaming body and its version. */
export interface WorkspaceStorageObject {
  readonly body: AsyncIterable<Uint8Array>
  readonly version: WorkspaceStorageVersion
}

/** What a storage write accepts. */
export type WorkspaceStorageBody = AsyncIterable<Uint8Array> | Uint8Array | string

/** One listed object. */
export interface WorkspaceStorageEntry {
  readonly path: string
}

/** Create only (`absent`) or replace exactly `version`. */
export type WorkspaceStorageWriteCondition =
  | { readonly kind: "absent" }
  | { readonly kind: "version"; readonly version: WorkspaceStorageVersion }

export interface WorkspaceStorageWriteOptions {
  readonly condition?: WorkspaceStorageWriteCondition
  readonly contentLength?: number
  readonly contentType?: string
}

/** What `WorkspaceStorageAdapter.acquire` receives. */
export interface WorkspaceStorageAcquireRequest {
  readonly evaluationId: string
  readonly id: string
  readonly lock: boolean
  readonly signal: AbortSignal
}

/**
 * Scoped access to one Workspace identity's objects. Paths are normalized relative `/` paths
 * (`workspace.json`, `revisions/…`). A failed write condition must reject.
 */
export interface WorkspaceStorageLease<Handle = unknown> {
  readonly handle: Handle
  read(path: string): Promise<WorkspaceStorageObject | undefined>
  write(path: string, body: WorkspaceStorageBody, options?: WorkspaceStorageWriteOptions): Promise<WorkspaceStorageVersion>
  list(prefix: string): Promise<readonly WorkspaceStorageEntry[]>
  delete(paths: readonly string[]): Promise<void>
  release(): Promise<void>
}

/**
 * Transport for revision-backed Workspaces. With `lock`, a second acquisition of an active
 * identity must reject with {@link WorkspaceConflictError}.
 */
export interface WorkspaceStorageAdapter<Handle = unknown> {
  readonly name: string
  acquire(request: WorkspaceStorageAcquireRequest): Promise<WorkspaceStorageLease<Handle>>
}

/** Options of {@link WorkspacePersistence} and {@link createPersistentWorkspaceProvider}. */
export interface WorkspacePersistenceOptions<StorageHandle = unknown> {
  storage: WorkspaceStorageAdapter<StorageHandle>
  /** Format of new revisions (restores use each revision's own). Default `"archive"`. */
  format?: WorkspacePersistenceFormat | undefined
  /** Largest archive saved or restored. Default 256 MiB. */
  maxArchiveBytes?: number | undefined
  /** Most entries (files and directories) saved or restored. Default 100 000. */
  maxEntries?: number | undefined
  /** Most uncompressed bytes saved or restored. Default 1 GiB. */
  maxExtractedBytes?: number | undefined
  /** Parent of each `aml-workspace-*` materialization. Default `os.tmpdir()`. */
  temporaryDirectory?: string | undefined
}

/** The lease handle of a persistent Workspace. */
export interface PersistentWorkspaceHandle<StorageHandle = unknown> {
  readonly format: WorkspacePersistenceFormat
  readonly kind: "persistent-workspace"
  /** The restored revision, when one was. */
  readonly revisionId?: string
  readonly storage: StorageHandle
}

/**
 * The revision lifecycle over a storage adapter: acquire materializes the selected revision
 * into a fresh temporary directory; `save()` publishes a new immutable revision
 * conditionally; `release()` removes the materialization and releases storage.
 */
export declare class WorkspacePersistence<StorageHandle = unknown> {
  constructor(options: WorkspacePersistenceOptions<StorageHandle>)
  /** The storage adapter's name. */
  readonly name: string
  acquire(request: WorkspaceAcquireRequest): Promise<WorkspaceLease<PersistentWorkspaceHandle<StorageHandle>>>
}

/**
 * A frozen revision-backed {@link WorkspaceProvider} named after `options.storage`.
 *
 * @example
 * ```ts
 * const provider = createPersistentWorkspaceProvider({ storage: myObjectStore, format: "folder" })
 * ```
 */
export declare function createPersistentWorkspaceProvider<StorageHandle = unknown>(
  options: WorkspacePersistenceOptions<StorageHandle>,
): Readonly<WorkspaceProvider<PersistentWorkspaceHandle<StorageHandle>>>

/**
 * The one storage path segment of a Workspace id: `encodeURIComponent` plus `!'()*` in
 * upper-case hex, with `.` and `..` encoded. Throws a TypeError for a non-normalized id.
 */
export declare function workspaceStorageSegment(id: string): string

/** Options of {@link localWorkspace}. */
export interface LocalWorkspaceOptions {
  /** An existing directory; resolved when the factory runs. */
  directory: string
}

/** The lease handle of {@link localWorkspace}. */
export interface LocalWorkspaceHandle {
  /** The physical (symlink-resolved) directory. */
  readonly directory: string
  readonly kind: "local-workspace"
}

/**
 * The configured existing directory is the Workspace (no revisions). Locked with the
 * `proper-lockfile` protocol on `<dir>.lock` (refresh 5 min, stale 20 min), so it excludes a
 * TypeScript AML process too. `save()` only checks the lock is healthy.
 */
export declare function localWorkspace(options: LocalWorkspaceOptions): Readonly<WorkspaceProvider<LocalWorkspaceHandle>>

/** Options of {@link FilesystemWorkspaceStorage}. */
export interface FilesystemWorkspaceStorageOptions {
  /** The store directory; resolved at construction. */
  directory: string
}

/** The storage handle of the filesystem store. */
export interface FilesystemWorkspaceStorageHandle {
  /** `<directory>/<workspaceStorageSegment(id)>`. */
  readonly directory: string
  readonly kind: "filesystem-workspace"
}

/**
 * The filesystem store as a {@link WorkspaceStorageAdapter} (`name` `"filesystem"`): objects at
 * `<directory>/<segment(id)>/<path>`, written atomically, versioned by SHA-256. Persistence
 * over an instance of this class runs entirely in Rust.
 */
export declare class FilesystemWorkspaceStorage implements WorkspaceStorageAdapter<FilesystemWorkspaceStorageHandle> {
  constructor(options: FilesystemWorkspaceStorageOptions)
  readonly name: "filesystem"
  acquire(request: WorkspaceStorageAcquireRequest): Promise<WorkspaceStorageLease<FilesystemWorkspaceStorageHandle>>
}

/** Options of {@link filesystemWorkspace}. */
export interface FilesystemWorkspaceOptions {
  /** Durable store directory (not the materialization); resolved at construction. */
  directory: string
  format?: WorkspacePersistenceFormat | undefined
  maxArchiveBytes?: number | undefined
  maxEntries?: number | undefined
  maxExtractedBytes?: number | undefined
  temporaryDirectory?: string | undefined
}

/** The lease handle of {@link filesystemWorkspace}. */
export type FilesystemWorkspaceHandle = PersistentWorkspaceHandle<FilesystemWorkspaceStorageHandle>

/**
 * Revision-backed Workspaces on the local filesystem: each acquisition materializes into a
 * temporary directory; saves publish immutable archive or folder revisions.
 *
 * @example
 * ```tsx
 * const workspace = filesystemWorkspace({ directory: ".aml/workspaces", format: "folder" })
 * ```
 */
export declare function filesystemWorkspace(options: FilesystemWorkspaceOptions): Readonly<WorkspaceProvider<FilesystemWorkspaceHandle>>

/**
 * The application's AWS SDK v3 `S3Client` (from `@aws-sdk/client-s3`, an optional peer
 * dependency), typed structurally so this package's types never require the SDK.
 */
export interface S3WorkspaceClient {
  send(command: unknown, options?: unknown): Promise<unknown>
}

/** Options of {@link s3Workspace}. `client` and `config` are exclusive. */
export interface S3WorkspaceOptions {
  bucket: string
  /** An application-supplied `S3Client`, driven with the application's own SDK commands. */
  client?: S3WorkspaceClient | undefined
  /**
   * An `S3ClientConfig` for the native client: `region` (default `"us-east-1"`),
   * `endpoint`, static `credentials` and `forcePathStyle`; other members need `client`.
   */
  config?: Readonly<Record<string, unknown>> | undefined
  /** Key prefix; default `"aml/workspaces"`. */
  prefix?: string | undefined
  format?: WorkspacePersistenceFormat | undefined
  maxArchiveBytes?: number | undefined
  maxEntries?: number | undefined
  maxExtractedBytes?: number | undefined
  /**
   * The `lock.json` lease in milliseconds, an integer from 1000 to 1200000: this provider's
   * locks renew every third of it and may be taken over by any host once a whole lease passed
   * without renewal (a worker that died on another host). Default: the reference's lease,
   * renewed every 5 minutes and taken over after 20. The lock records its lease, so other
   * processes judge it by the holder's setting, not theirs (docs/S3-WORKSPACE.md).
   */
  lockLeaseMs?: number | undefined
  temporaryDirectory?: string | undefined
}

/** The lease handle of {@link s3Workspace}. */
export type S3WorkspaceHandle = PersistentWorkspaceHandle<{
  readonly bucket: string
  readonly kind: "s3-workspace"
  readonly prefix: string
}>

/**
 * Revision-backed Workspaces in S3 (storage name `"s3"`): ETag versions, `If-None-Match: *` /
 * `If-Match` publication and the `lock.json` lease (docs/S3-WORKSPACE.md).
 *
 * @example
 * ```tsx
 * const workspace = s3Workspace({ bucket: "agents", config: { region: "eu-west-1" } })
 * ```
 */
export declare function s3Workspace(options: S3WorkspaceOptions): Readonly<WorkspaceProvider<S3WorkspaceHandle>>

// ---------------------------------------------------------------------------------------
// Primitive props
// ---------------------------------------------------------------------------------------

/** Props of `<Agent>`. */
export interface AgentProps {
  /** Prompt text plus Agent-scoped descriptors (System, Skill, Tool, Mcp, FollowUp). */
  children?: AmlRenderable
  /** Provider for this session; defaults to the runtime `agentProvider`. */
  provider?: AgentProvider
  /** Provider-owned model id, passed through as `AgentRequest.model`. */
  model?: string
  /** Fixed system text, after the runtime's and before child `<System>` blocks. */
  system?: string
  /** Overrides of the default read-write filesystem, network and shell permissions. */
  permissions?: AgentPermissionOverrides
  /** Agent cwd relative to the enclosing Sandbox root; requires a `<Sandbox>`. */
  cwd?: string
}

/** Props of `<System>`. */
export interface SystemProps {
  /** Content that must resolve to non-empty system text. */
  children?: AmlRenderable
}

/** Props of `<FollowUp>`. */
export interface FollowUpProps {
  /** Content of one later turn; must resolve to non-empty text. */
  children?: AmlRenderable
}

/** Props of `<Tool>`: exactly one Tool from `defineTool()`, no children. */
export interface ToolProps {
  use: AmlTool
}

/** Props of `<Mcp>`: a provider-native server `name`, or a `defineMcpServer()` descriptor. */
export type McpProps = { name: string; use?: never } | { name?: never; use: AmlMcpServer }

/** Props of `<Skill>`: at least one of `src` and children. */
export interface SkillProps {
  /** Inline instruction content. */
  children?: AmlRenderable
  /** Normalized model-facing description. */
  description?: string
  /** Normalized model-facing name. */
  name?: string
  /**
   * Local path resolved from the runtime `cwd`: a text file (inlined), or a package
   * directory with SKILL.md (staged for the Agent, never inlined). See docs/SKILL.md.
   */
  src?: string
}

/**
 * Props of `<Include>`: read a file and inline it, or stage it for the Agent when it is
 * larger than `maxBytes`. `path` is relative to the nearest active filesystem (Sandbox,
 * else Workspace); `src` is an application file resolved from the runtime `cwd`.
 */
export type IncludeProps =
  | { path: string; src?: never; maxBytes?: number }
  | { src: string; path?: never; maxBytes?: number }

/**
 * Props of `<File>`: replace one UTF-8 file at `path` (relative to the nearest active
 * filesystem) with the resolved children, or with an application file `src`.
 */
export type FileProps =
  | { path: string; children: AmlRenderable; src?: never }
  | { path: string; src: string; children?: never }

/** Interpreter of `<Script shell>`. */
export type ScriptShell = "bash" | "node" | "sh"

/**
 * Props of `<Script>`: either a literal `command` with `args`, or `shell` source given as
 * children. Both accept `cwd` and a positive `timeoutMs`.
 */
export type ScriptProps =
  | {
      command: string
      args?: readonly string[]
      children?: never
      shell?: never
      cwd?: string
      timeoutMs?: number
    }
  | {
      shell: ScriptShell
      children: AmlRenderable
      command?: never
      args?: never
      cwd?: string
      timeoutMs?: number
    }

/** Props of `<Sandbox>`. */
export interface SandboxProps {
  /** Requested filesystem authority; defaults to `"read-only"` (or the parent's when nested). */
  access?: SandboxAccess
  children?: AmlRenderable
  /** Logical cwd within `root`. */
  cwd?: string
  /** Provider of an outer Sandbox; defaults to the runtime `sandboxProvider`. Not allowed when nested. */
  provider?: SandboxProvider
  /** Logical root for descendants; defaults to `"."`. */
  root?: string
}

/** Options of `<Workspace load>`. */
export interface WorkspaceLoadOptions {
  /** `"current"` (default) or a revision id. */
  revision?: "current" | (string & {})
  include?: readonly string[]
  exclude?: readonly string[]
}

/** Options of `<Workspace save>`. */
export interface WorkspaceSaveOptions {
  /** Save after success only (default) or always. Cancellation never saves. */
  on?: "always" | "success"
  /** Revisions to keep, the new one included; defaults to 1. */
  retention?: number
  /** Honour `.gitignore` when no `include` is given; defaults to `true`. */
  gitignore?: boolean
  include?: readonly string[]
  exclude?: readonly string[]
}

/** Props of `<Workspace>`. */
export interface WorkspaceProps {
  children?: AmlRenderable
  /** Provider for this Workspace; defaults to the runtime `workspaceProvider`. */
  provider?: WorkspaceProvider
  /** Durable identity; defaults to a random UUID. */
  id?: string
  /** Logical descendant cwd inside the materialization; defaults to `"."`. */
  cwd?: string
  /** What to load; defaults to `true` (the current revision). */
  load?: boolean | WorkspaceLoadOptions
  /** Whether and how to publish a revision; defaults to `false`. */
  save?: boolean | WorkspaceSaveOptions
  /** Ask the provider to reject a competing writer; defaults to `true`. */
  lock?: boolean
  /** Coordination of writable sibling Sandboxes; defaults to `"serial"`. */
  writeConcurrency?: "serial" | "parallel"
}

/** Recursively read-only view of a value. */
export type DeepReadonly<Value> = Value extends (...args: never[]) => unknown
  ? Value
  : Value extends readonly (infer Item)[]
    ? readonly DeepReadonly<Item>[]
    : Value extends object
      ? { readonly [Key in keyof Value]: DeepReadonly<Value[Key]> }
      : Value

/** What `<Loop render>` receives on each iteration. */
export interface LoopRenderContext<State> {
  /** 1-based iteration number. */
  readonly iteration: number
  /** Frozen snapshot of the committed state. */
  readonly state: DeepReadonly<State>
}

/**
 * Props of `<Loop>` (draft). `schema` validates object state whose output type must be
 * accepted again as input; `render` must resolve to exactly one `<Agent>`.
 */
export interface LoopProps<Schema extends StandardSchemaV1<unknown, Record<string, unknown>>> {
  initial: StandardSchemaV1.InferInput<Schema>
  /** Label in messages and traces; defaults to `"Loop"`. */
  name?: string
  render(context: LoopRenderContext<StandardSchemaV1.InferOutput<Schema>>): AmlRenderable
  schema: StandardSchemaV1.InferOutput<Schema> extends StandardSchemaV1.InferInput<Schema> ? Schema : never
}

/** Props of `<Parallel>`: each child is one concurrently evaluated branch. */
export interface ParallelProps {
  children?: AmlRenderable
}

/** Props of a `<Ctx.Provider>` (draft). `value` is required as an own prop, even if `undefined`. */
export interface ContextProviderProps<Value> {
  readonly children?: AmlRenderable
  readonly value: Value
}

/**
 * A Context (draft): a named dependency scoped downward by its Provider. Identity is this
 * exact object, not its name; copies of the SDK in one realm share it.
 */
export interface AmlContext<Value> {
  /** Appears in diagnostics. */
  readonly name: string
  /**
   * Binds `value` (by identity: never cloned, frozen, rendered or traced) for its subtree. A
   * transparent wrapper: it keeps the surrounding text or Agent channel and adds no depth or span.
   */
  readonly Provider: (props: ContextProviderProps<Value>) => AmlRenderable
}

/**
 * Creates a required Context: reading it with no Provider above throws
 * `EvaluationError('Context "<name>" has no Provider or default value')`.
 */
export declare function createContext<Value>(name: string): AmlContext<Value>
/** Creates a defaulted Context; an explicit `undefined` default counts as a default. */
export declare function createContext<Value>(name: string, defaultValue: Value): AmlContext<Value>
/**
 * Reads the nearest Provider's value (or the default) for the component being invoked.
 * Synchronous; only valid while an AML function component is active.
 */
export declare function useContext<Value>(context: AmlContext<Value>): Value

// ---------------------------------------------------------------------------------------
// Primitives. Each is evaluated only by AmlRuntime; calling one directly throws.
// ---------------------------------------------------------------------------------------

/** One provider-owned Agent session over its resolved prompt, system text and capabilities. */
export declare function Agent(props: AgentProps): never
/** Adds resolved text to the nearest `<Agent>`'s system prompt. */
export declare function System(props: SystemProps): never
/** One later turn in the nearest `<Agent>`'s session. */
export declare function FollowUp(props: FollowUpProps): never
/** Grants a `defineTool()` Tool to the nearest `<Agent>`. */
export declare function Tool(props: ToolProps): never
/** Grants one MCP server to the nearest `<Agent>`. */
export declare function Mcp(props: McpProps): never
/** Reusable instruction text, inline and/or read from a local file. */
export declare function Skill(props: SkillProps): never
/**
 * Atomically replaces one UTF-8 file on the nearest active filesystem — a read-write
 * Sandbox guest, else the Workspace materialization — with the resolved children or the
 * application file `src`; adds no text. Symlinked or non-directory parents and non-regular
 * destinations are refused (see docs/WORKSPACE.md for every message).
 */
export declare function File(props: FileProps): never
/**
 * Inlines one UTF-8 file (`path` on the nearest active filesystem, or the application file
 * `src`). Above `maxBytes` (default: no limit) it puts a read instruction with size and line
 * metadata in the containing Agent instead, staging the file for that Agent's call.
 */
export declare function Include(props: IncludeProps): never
/** Repeats one Agent over validated state until the state stops changing (draft). */
export declare function Loop<Schema extends StandardSchemaV1<unknown, Record<string, unknown>>>(
  props: LoopProps<Schema>,
): never
/** Evaluates its children concurrently and joins them in authored order. */
export declare function Parallel(props: ParallelProps): never
/** Acquires (or narrows) an execution lease for its descendants. */
export declare function Sandbox(props: SandboxProps): never
/** Runs a command or shell source on the host or in the active Sandbox; adds its stdout. */
export declare function Script(props: ScriptProps): never
/**
 * Materializes the evaluation's one durable Workspace around its descendants: one
 * `acquire()`, then save (per `save`, never after cancellation) and release exactly once
 * after the subtree settles. It must be the top-level resource boundary.
 */
export declare function Workspace(props: WorkspaceProps): never

// ---------------------------------------------------------------------------------------
// Resumable evaluations and the failure channel (docs/JOURNAL.md)
// ---------------------------------------------------------------------------------------

/** One settled step in a journal: plain JSON, so any store can keep it. */
export interface AmlJournalEntry {
  /** The step's stable position: `agent:<position>` or `tool:<position>t<n>`. */
  readonly key: string
  /** Digest of the request the step answered; a different request re-runs the step. */
  readonly digest: string
  readonly kind: "agent" | "tool"
  /**
   * The settled result: `{ text }` or `{ structured }` (plus `stateCalls?`) for an Agent
   * (`stateCalls`: the inputs of its `aml_set_state` calls), `{ output }` for a Tool.
   */
  readonly value: Readonly<Record<string, unknown>>
}

/**
 * Where an evaluation journal lives. AML calls `entries()` once when the evaluation starts
 * (a later entry for the same key wins) and `append(entry)` once per settled step, awaiting
 * a returned promise before the workflow moves on. Implement it over a database, a
 * Workspace file, or use `createMemoryJournal()` / `createFileJournal()`. One journal
 * belongs to one workflow run at a time.
 */
export interface AmlJournal {
  entries(): Iterable<AmlJournalEntry> | PromiseLike<Iterable<AmlJournalEntry>>
  append(entry: AmlJournalEntry): void | PromiseLike<void>
}

/** The durable journal of `createFileJournal()`. */
export interface AmlFileJournal extends AmlJournal {
  /** The absolute journal file path. */
  readonly path: string
  readonly workflow: string
  /** Whether opening dropped a torn last record (a crash during its write). */
  readonly repaired: boolean
  entries(): readonly AmlJournalEntry[]
  append(entry: AmlJournalEntry): void
}

/** An append-only in-memory journal, optionally seeded with earlier entries. */
export declare function createMemoryJournal(entries?: Iterable<AmlJournalEntry>): {
  entries(): readonly AmlJournalEntry[]
  append(entry: AmlJournalEntry): void
}

/**
 * Opens (creating it when missing) an append-only journal file for `workflow`: one JSON
 * line per settled step, each made durable with `fdatasync` before the evaluation moves on.
 * A torn last record (a crash mid-write) is dropped on reopen. Throws
 * `Error('AML journal "<path>" belongs to workflow "<found>", not "<workflow>"')` for
 * another workflow's file and `Error('AML journal "<path>" is not an AML journal file')`
 * for any other file.
 */
export declare function createFileJournal(path: string, options: { readonly workflow: string }): AmlFileJournal

/** What kind of failure an error is (see `describeFailure`). */
export type AmlFailureKind =
  | "cancelled"
  | "limit"
  | "configuration"
  | "agent"
  | "tool"
  | "sandbox"
  | "workspace"
  | "script"
  | "journal"
  | "internal"

/** A frozen, user-safe description of a failure. */
export interface AmlFailure {
  readonly kind: AmlFailureKind
  /** AML's own message, with provider, process and environment text left out. */
  readonly message: string
  /** Whether retrying the same workflow (ideally with its journal) can succeed. */
  readonly retryable: boolean
  /** The span the failure names (e.g. the failed Agent's), when it names one. */
  readonly spanId?: string
}

/**
 * Classifies any thrown value, structurally (it works on errors from other copies of the
 * package), looking through `cause` chains and `AggregateError`s. `options.signal` (the
 * evaluation's signal) makes its custom abort reason count as `cancelled`.
 */
export declare function describeFailure(error: unknown, options?: { readonly signal?: AbortSignal }): AmlFailure

/**
 * The engine's check of an {@link AgentUsage}, for code that handles usage of its own (an
 * exporter, a dashboard, a provider adapter): a frozen copy with only the reported fields, or
 * `undefined` for `undefined`, `null` or an object that reports nothing.
 *
 * @throws {TypeError} `usage.<field> must be a non-negative safe integer`, `usage must be an object`.
 */
export declare function normalizeUsage(usage: unknown): AgentUsage | undefined

/** Options of {@link recordRuns} (docs/STUDIO.md). */
export interface RecordRunsOptions {
  /** The runs directory; default `.aml/runs` relative to the working directory. */
  readonly dir?: string
  /** Record prompts, answers and error messages too (AML's content consent); default `false`. */
  readonly captureContent?: boolean
  /** The cap of one run's events file in bytes; default 64 MiB. Past it the run is marked `truncated`. */
  readonly maxBytes?: number
}

/**
 * Records every evaluation of `runtime` as a run under the runs directory, for `aml studio`
 * (docs/STUDIO.md). Returns a function that stops recording; a run in progress is recorded to
 * its end. A run's record is completed off the JS thread just after its evaluation settles;
 * the promise the stop function returns resolves once every run recorded so far is complete
 * on disk.
 *
 * @throws {TypeError} `recordRuns runtime must be an AmlRuntime`, and the option messages.
 */
export declare function recordRuns(runtime: AmlRuntime, options?: RecordRunsOptions): () => Promise<void>

export {}

// ---------------------------------------------------------------------------------------
// Container and remote Sandbox providers (docs/DOCKER-SANDBOX.md)
// ---------------------------------------------------------------------------------------

/** Options of {@link dockerSandbox}. */
export interface DockerSandboxOptions {
  /** Image reference to start; defaults to `wearesingular/aml-agent-sandbox:latest`. */
  image?: string
  /** Shared stdout+stderr byte budget of one command (setup included); defaults to 4 MiB. */
  maxOutputBytes?: number
  /** Trusted shell command run with `sh -lc` once the container runs and the Workspace is mounted. */
  setup?: string
  /** Docker user or `UID:GID` for the container (`--user`); the image default otherwise. */
  user?: string
  /** Fallback host Workspace directory when no `<Workspace>` is active. */
  workspace?: string
}

/** The lease handle of {@link dockerSandbox}: the container the lease owns. */
export interface DockerSandboxHandle {
  readonly containerId: string
  readonly kind: "docker"
}

/**
 * A Sandbox provider named `"docker"`: one disposable container per lease, started from
 * `image` with the Workspace root bind-mounted at `/workspace` (`:ro` under read-only access,
 * so `exec()` and `spawn()` stay allowed), commands run as execs with the logical cwd under
 * `/workspace`, and the container removed on release, on a command timeout or cancellation.
 * The lease id is the container id. The daemon is reached over its Unix socket
 * (`DOCKER_HOST=unix://…` or `/var/run/docker.sock`).
 *
 * @throws {TypeError} `Docker Sandbox options must be an object`, `Docker Sandbox image|setup|user|workspace
 *   must be a non-empty normalized string`.
 * @throws {RangeError} `Docker Sandbox maxOutputBytes must be a positive safe integer`.
 */
export declare function dockerSandbox(options?: DockerSandboxOptions): Readonly<SandboxProvider<DockerSandboxHandle>>

/** Creation options of {@link daytonaSandbox}, passed to the Daytona client's `create`. */
export interface DaytonaSandboxCreateOptions {
  /** Provider-native snapshot-create log callback. */
  onSnapshotCreateLogs?: (chunk: string) => void
  /** Creation timeout (Daytona's unit, seconds). */
  timeout?: number
}

/** Options of {@link daytonaSandbox}. `image` and `snapshot` exclude each other, as do `client` and `config`. */
export interface DaytonaSandboxOptions {
  /** An initialized Daytona client (`new Daytona(…)` of `@daytona/sdk` >= 0.201). */
  client?: unknown
  /** Configuration for a Daytona client constructed lazily from the optional peer `@daytona/sdk`. */
  config?: Record<string, unknown>
  /** Additional provider-native creation parameters; never `image` or `snapshot`. */
  create?: Record<string, unknown>
  createOptions?: DaytonaSandboxCreateOptions
  /** Image reference; defaults to `wearesingular/aml-agent-sandbox:latest` when `snapshot` is absent. */
  image?: string
  /** Byte budget of command and process output (not the Workspace transfer); defaults to 4 MiB. */
  maxOutputBytes?: number
  /** Trusted shell command run with `sh -lc` after hydration. */
  setup?: string
  /** Snapshot reference (snapshot-based creation). */
  snapshot?: string
  /** Fallback host Workspace directory when no `<Workspace>` is active. */
  workspace?: string
}

/** The lease handle of {@link daytonaSandbox}: the SDK's Sandbox object. */
export interface DaytonaSandboxHandle {
  readonly kind: "daytona"
  readonly sandbox: unknown
}

/**
 * A Sandbox provider named `"daytona"`: one disposable Daytona Sandbox per lease. The
 * Workspace root is packed on the host, uploaded and extracted into the relative guest
 * directory `workspace`; a read-write lease mirrors the remote tree back (additions,
 * changes, deletions) on release, then deletes the Sandbox. `exec()` and `spawn()` reject
 * under read-only access. The lease id is `daytona:<sandbox id>`.
 *
 * @throws {TypeError} `Daytona Sandbox accepts either client or config, not both`,
 *   `Daytona Sandbox image and snapshot are root options, not create options`,
 *   `Daytona Sandbox accepts either image or snapshot, not both`,
 *   `Daytona Sandbox setup|workspace must be a non-empty string`.
 * @throws {RangeError} `Daytona Sandbox maxOutputBytes must be a positive safe integer`.
 */
export declare function daytonaSandbox(options?: DaytonaSandboxOptions): Readonly<SandboxProvider<DaytonaSandboxHandle>>

/** Options of {@link modalSandbox}. `client` and `config` exclude each other. */
export interface ModalSandboxOptions {
  /** Modal app name, looked up with `createIfMissing: true`; defaults to `aml-jsx`. */
  appName?: string
  /** An initialized `ModalClient` of the `modal` package (>= 0.9: its `sandbox.filesystem` API). */
  client?: unknown
  /** `ModalClientParams` for a client constructed lazily from the optional peer `modal`. */
  config?: Record<string, unknown>
  /** Provider-native `SandboxCreateParams`. */
  create?: Record<string, unknown>
  /** Registry image reference (`images.fromRegistry`); defaults to `wearesingular/aml-agent-sandbox:latest`. */
  image?: string
  /** Byte budget of command and process output (not the Workspace transfer); defaults to 4 MiB. */
  maxOutputBytes?: number
  /** Trusted shell command run with `sh -lc` after hydration. */
  setup?: string
  /** Fallback host Workspace directory when no `<Workspace>` is active. */
  workspace?: string
}

/** The lease handle of {@link modalSandbox}: the SDK's Sandbox object. */
export interface ModalSandboxHandle {
  readonly kind: "modal"
  readonly sandbox: unknown
}

/**
 * A Sandbox provider named `"modal"`: one disposable Modal Sandbox per lease, the Workspace
 * root transferred into `/workspace` and mirrored back on a read-write release, then the
 * Sandbox terminated. `exec()` and `spawn()` reject under read-only access. The lease id is
 * `modal:<sandbox id>`.
 *
 * @throws {TypeError} `Modal Sandbox accepts either client or config, not both`,
 *   `Modal Sandbox image|appName|setup|workspace must be a non-empty string`.
 * @throws {RangeError} `Modal Sandbox maxOutputBytes must be a positive safe integer`.
 */
export declare function modalSandbox(options?: ModalSandboxOptions): Readonly<SandboxProvider<ModalSandboxHandle>>
