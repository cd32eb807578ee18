// Types of @aml-jsx/sdk/testing: credential-free fixtures and provider conformance helpers.

import type {
  AgentExecutionContext,
  AgentProvider,
  AgentRequest,
  AgentResponse,
  SandboxAcquireRequest,
  SandboxExecOptions,
  SandboxExecResult,
  SandboxLease,
  SandboxProcess,
  SandboxProvider,
  SandboxSession,
  WorkspaceAcquireRequest,
  WorkspaceLease,
  WorkspaceProvider,
  WorkspaceConflictError,
  WorkspaceStorageAcquireRequest,
  WorkspaceStorageAdapter,
  WorkspaceStorageLease,
} from "../index.js"

/**
 * An Agent provider that starts nothing: it records each normalized request with its
 * execution context and answers with an application-owned `respond` strategy.
 *
 * @example
 * const provider = new DeterministicAgentProvider({
 *   respond: (request, context, callIndex) => ({ text: `${callIndex}:${request.prompt}` }),
 * })
 */
export declare class DeterministicAgentProvider implements AgentProvider {
  /**
   * @throws {TypeError} `Deterministic Agent provider name must not be empty`,
   *   `Deterministic Agent provider name must already be normalized` and
   *   `Deterministic Agent provider maxRecordedCalls must be a non-negative integer or Infinity`.
   */
  constructor(options?: {
    /** Provider name; defaults to `"deterministic"`. Must be non-empty and normalized. */
    name?: string
    /**
     * Produces the response of each call from the request, the context and the 0-based
     * call index. Defaults to echoing the prompt: `{ text: request.prompt }`.
     */
    respond?: (
      request: AgentRequest,
      context: AgentExecutionContext,
      callIndex: number,
    ) => AgentResponse | Promise<AgentResponse>
    /** Declares compatibility with an effective Sandbox; only an exact `true` counts. */
    supportsSandbox?: (sandbox: SandboxSession) => boolean
    /**
     * How many of the latest calls `calls` keeps (default `Infinity`: every call, as the
     * reference does). Each record holds its request and context, a few KiB; bound it in a
     * test that evaluates many thousands of times.
     */
    maxRecordedCalls?: number
  })
  readonly name: string
  /** A frozen snapshot of the recorded calls, in provider execution order; entries are frozen. */
  get calls(): readonly Readonly<{ context: AgentExecutionContext; request: AgentRequest }>[]
  /** Forgets the recorded calls; the `callIndex` passed to `respond` keeps counting. */
  clearCalls(): void
  /** `options.supportsSandbox?.(sandbox) === true`. */
  supportsSandbox(sandbox: SandboxSession): boolean
  /** Rejects a pre-aborted signal with its reason, records the call, then awaits `respond`. */
  run(request: AgentRequest, context: AgentExecutionContext): Promise<AgentResponse>
}

/**
 * A frozen {@link AgentExecutionContext} for calling a provider outside an evaluation.
 * Defaults: `events` whose `on`/`once` do nothing and return no-op unsubscribers, a fresh
 * never-aborted signal, and `trace` `{ runId: "agent-test", spanId: "agent-test" }`. A given
 * `trace` is stored as a new frozen copy holding only `parentSpanId` (when given), `runId`
 * and `spanId`, each read once. The context carries no AML observability service, so no
 * spans are emitted through it.
 */
export declare function createAgentExecutionContext(
  overrides?: Partial<AgentExecutionContext>,
): Readonly<AgentExecutionContext>

/**
 * Checks the portable Agent provider contract with any test runner: the provider shape
 * (the `defineAgentProvider()` TypeErrors), a `{ text: string }` response to a two-turn
 * request, and rejection of a pre-cancelled run with exactly the signal's reason.
 *
 * @throws {TypeError} `Agent provider must return a text response`,
 *   `Agent provider must reject pre-cancelled execution with the AbortSignal reason`
 *   (with the actual rejection as `cause`), `Agent provider must reject pre-cancelled execution`.
 */
export declare function agentProviderConformance(provider: AgentProvider): Promise<void>

/** The default handle of a {@link DeterministicSandboxProvider} lease. */
export interface DeterministicSandboxHandle {
  /** 0-based acquisition index; the lease id is `${name}-${acquisition + 1}`. */
  readonly acquisition: number
  readonly kind: "deterministic-sandbox"
  readonly request: SandboxAcquireRequest
}

/** What the `release` hook of a {@link DeterministicSandboxProvider} receives first (frozen). */
export interface DeterministicSandboxRelease<Handle = DeterministicSandboxHandle> {
  readonly handle: Handle
  /** The lease id, `${name}-${acquisition + 1}`. */
  readonly id: string
}

/** Hooks of a {@link DeterministicSandboxProvider}. */
export interface DeterministicSandboxProviderOptions<Handle = DeterministicSandboxHandle> {
  /** Builds the lease handle; `acquisition` counts from 0. Defaults to a frozen {@link DeterministicSandboxHandle}. */
  createHandle?: (request: SandboxAcquireRequest, acquisition: number) => Handle | Promise<Handle>
  /**
   * Answers `runtime.exec`; defaults to `{ exitCode: 0, stderr: "", stdout: [command, ...args].join(" ") }`.
   * `request` is the lease's acquisition request; `options` is exactly what the caller
   * passed (`<Script>` passes `{ cwd, signal }`, plus `timeoutMs` when set), or `undefined`.
   */
  exec?: (
    command: string,
    args: readonly string[],
    request: SandboxAcquireRequest,
    options: SandboxExecOptions | undefined,
  ) => SandboxExecResult | Promise<SandboxExecResult>
  /** Provider name; defaults to `"deterministic-sandbox"`. Must be non-empty and normalized. */
  name?: string
  /** Runs once when a lease is released, with the frozen `{ handle, id }` and the 0-based acquisition index. */
  release?: (lease: DeterministicSandboxRelease<Handle>, acquisition: number) => void | Promise<void>
  /**
   * Answers `runtime.spawn` with the same arguments as `exec`; defaults to an already-exited
   * process (exit 0) whose stdout is the default exec stdout and whose id is
   * `deterministic-process:<command>`.
   */
  spawn?: (
    command: string,
    args: readonly string[],
    request: SandboxAcquireRequest,
    options: SandboxExecOptions | undefined,
  ) => SandboxProcess | Promise<SandboxProcess>
}

/**
 * A Sandbox provider that starts nothing: it records each acquisition request and each
 * release, and its runtime (with the requested access, cwd and root) answers from the hooks.
 *
 * @example
 * const sandbox = new DeterministicSandboxProvider({ exec: () => ({ exitCode: 0, stderr: "", stdout: "ok" }) })
 */
export declare class DeterministicSandboxProvider<Handle = DeterministicSandboxHandle>
  implements SandboxProvider<Handle>
{
  /**
   * @throws {TypeError} `Deterministic Sandbox provider name must not be empty` and
   *   `Deterministic Sandbox provider name must already be normalized`.
   */
  constructor(options?: DeterministicSandboxProviderOptions<Handle>)
  readonly name: string
  /** A frozen snapshot of the acquisition requests, in order. */
  get acquisitions(): readonly SandboxAcquireRequest[]
  /** A frozen snapshot of the released lease ids, in release order. */
  get releases(): readonly string[]
  /** Rejects an aborted signal with its reason; `release()` is memoised. */
  acquire(request: SandboxAcquireRequest): Promise<SandboxLease<Handle>>
}

/**
 * Checks the portable Sandbox provider contract: the provider shape, one read-only
 * acquisition (`cwd` and `root` `"."`, evaluationId `"sandbox-provider-conformance"`) whose
 * lease and runtime pass the runtime's validation (the `<Sandbox>` lease TypeErrors) and
 * preserve the requested access, cwd and root. The lease is always released.
 *
 * @throws {TypeError} `Sandbox provider "<name>" runtime must preserve the acquired access, cwd, and root`.
 * @throws {AggregateError} `Sandbox provider "<name>" failed conformance and cleanup`.
 */
export declare function sandboxProviderConformance(provider: SandboxProvider): Promise<void>

/** One scripted Tool call of a {@link nativeScriptedProvider}. */
export interface NativeScriptStep {
  /** The name of a Tool granted to the Agent (`<Tool use>`); other names report an error outcome. */
  readonly tool: string
  /** The JSON input, as a model would send it; it goes through the Tool's validation pipeline. */
  readonly input: unknown
}

/** The plan of a {@link nativeScriptedProvider}. */
export interface NativeScriptPlan {
  /** Provider name; defaults to `"native-scripted"`. Must be non-empty and normalized. */
  readonly name?: string
  /** The Tool calls of every run, in order. */
  readonly steps: readonly NativeScriptStep[]
  /** Issue every step at once (like a model's parallel tool calls); defaults to one after another. */
  readonly concurrent?: boolean
}

/** One finished run of a {@link NativeScriptedProvider}. */
export interface NativeScriptReport {
  /**
   * The response text: one JSON object per step that ran, in step order —
   * `{"ok":true,"value":<output>}` or
   * `{"ok":false,"kind":"input"|"output"|"failed"|"cancelled"|"unavailable","name":<error class>,"message":<text>}`.
   */
  readonly text: string
  /** The run was cancelled (its evaluation aborted); a sequential plan stops before its next step. */
  readonly cancelled: boolean
}

/** The provider returned by {@link nativeScriptedProvider}. */
export interface NativeScriptedProvider extends AgentProvider {
  readonly name: string
  /** A frozen snapshot of every finished run, aborted ones included, in order. */
  readonly reports: readonly NativeScriptReport[]
  /**
   * Lends `request.tools` to a Rust task that calls them through the native Tool dispatcher.
   * Resolves with `{ text }` (see {@link NativeScriptReport.text}); when `context.signal`
   * aborts, the pending native calls settle first, then it rejects with the signal's reason.
   */
  run(request: AgentRequest, context: AgentExecutionContext): Promise<AgentResponse>
}

/**
 * A test utility for Rust-native provider ports (the ACP engine, the MCP Tool bridge): an
 * Agent provider whose runs call the granted JavaScript Tools from a tokio task, through the
 * same weak threadsafe-function dispatcher and the same validation pipeline, `tool` spans and
 * cancellation a native provider uses. Tool failures (`ToolInputError`, `ToolOutputError`,
 * thrown errors) are reported as data in the response text, as a native provider reports
 * them to its model.
 *
 * @example
 * const provider = nativeScriptedProvider({ steps: [{ tool: "add", input: { a: 1, b: 2 } }] })
 * await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent><Tool use={add} />Add.</Agent>)
 * // → '{"ok":true,"value":{"sum":3}}'
 *
 * @throws {TypeError} `nativeScriptedProvider plan must be an object`,
 *   `nativeScriptedProvider name must be a non-empty normalized string`, and
 *   `nativeScriptedProvider plan is invalid: <reason>` for steps that are not
 *   `{ tool: string, input }` objects.
 */
export declare function nativeScriptedProvider(plan: NativeScriptPlan): NativeScriptedProvider

/** The default handle of a {@link DeterministicWorkspaceProvider} lease. */
export interface DeterministicWorkspaceHandle {
  /** 0-based acquisition index; the lease id is `${name}-${acquisition + 1}`. */
  readonly acquisition: number
  readonly kind: "deterministic-workspace"
  readonly request: WorkspaceAcquireRequest
}

/** The frozen identity of one lease that the save and release hooks receive. */
export interface DeterministicWorkspaceLeaseIdentity<Handle = DeterministicWorkspaceHandle> {
  readonly directory: string
  readonly handle: Handle
  readonly id: string
}

/**
 * Options and hooks of a {@link DeterministicWorkspaceProvider}. `acquisition` is the
 * 0-based acquisition index; `createHandle` runs before `directory`.
 */
export interface DeterministicWorkspaceProviderOptions<Handle = DeterministicWorkspaceHandle> {
  /** Builds the lease handle; defaults to a frozen {@link DeterministicWorkspaceHandle}. */
  createHandle?: (request: WorkspaceAcquireRequest, acquisition: number) => Handle | Promise<Handle>
  /** The lease directory, fixed or per acquisition; defaults to `"/deterministic-workspace"`. */
  directory?: string | ((request: WorkspaceAcquireRequest, acquisition: number) => string | Promise<string>)
  /** Provider name; defaults to `"deterministic-workspace"`. Must be non-empty and normalized. */
  name?: string
  /**
   * Runs once when a lease is released, after its id is appended to `releases`; the writer
   * is freed even if it throws.
   */
  release?: (lease: DeterministicWorkspaceLeaseIdentity<Handle>, acquisition: number) => void | Promise<void>
  /** Runs on every `save()`, after the lease id is appended to `saves` (failed attempts are listed). */
  save?: (lease: DeterministicWorkspaceLeaseIdentity<Handle>, acquisition: number) => void | Promise<void>
}

/**
 * A Workspace provider that stores nothing: it records acquisitions, saves and releases
 * and enforces one active locking writer per Workspace id.
 *
 * @example
 * const workspace = new DeterministicWorkspaceProvider({ directory: "/workspace/review-42" })
 */
export declare class DeterministicWorkspaceProvider<Handle = DeterministicWorkspaceHandle>
  implements WorkspaceProvider<Handle>
{
  /** @throws {TypeError} `Deterministic Workspace provider name must be non-empty and normalized`. */
  constructor(options?: DeterministicWorkspaceProviderOptions<Handle>)
  readonly name: string
  /** A frozen snapshot of the acquisition requests, in order. */
  get acquisitions(): readonly WorkspaceAcquireRequest[]
  /** A frozen snapshot of the lease ids whose save was attempted, in save order. */
  get saves(): readonly string[]
  /** A frozen snapshot of the released lease ids, in release order. */
  get releases(): readonly string[]
  /**
   * Rejects an aborted signal with its reason, and a second locking acquisition of an
   * active id with `WorkspaceConflictError`; `release()` is memoised.
   */
  acquire(request: WorkspaceAcquireRequest): Promise<WorkspaceLease<Handle>>
}

/**
 * Checks the portable Workspace provider contract: a locked acquisition of
 * `"conformance-workspace"` whose lease passes the runtime's validation, refusal of a
 * concurrent second writer with `WorkspaceConflictError`, save and release, then a restoring
 * acquisition with save and release. Leases are always released.
 *
 * @throws {TypeError} `Workspace provider "<name>" allowed concurrent writers for "conformance-workspace"`,
 *   and the `<Workspace>` lease TypeErrors.
 * @throws {AggregateError} `Workspace provider "<name>" allowed concurrent writers and cleanup failed`,
 *   `Workspace provider "<name>" failed conformance and cleanup`, `Workspace provider failed persistence and cleanup`.
 */
export declare function workspaceProviderConformance(provider: WorkspaceProvider): Promise<void>
/** One recorded {@link InMemoryWorkspaceStorageAdapter} lease operation. */
export interface WorkspaceStorageOperation {
  readonly kind: "delete" | "list" | "read" | "release" | "write"
  /** The object path (or list prefix); absent for `release`. */
  readonly path?: string
  readonly workspaceId: string
}

/**
 * A stateful in-memory {@link WorkspaceStorageAdapter} spy (`name`
 * `"memory-workspace-storage"`): conditional writes (versions `memory-N`; a failed condition
 * rejects with `Workspace storage condition failed for "<path>"`), one locked lease per
 * identity ({@link WorkspaceConflictError}), and a record of every operation.
 */
export declare class InMemoryWorkspaceStorageAdapter
  implements WorkspaceStorageAdapter<{ readonly kind: "memory-workspace-storage"; readonly workspaceId: string }>
{
  readonly name: "memory-workspace-storage"
  /** Every lease operation so far, in order. */
  readonly operations: readonly WorkspaceStorageOperation[]
  /** The stored object paths of one Workspace, sorted. */
  keys(workspaceId: string): string[]
  /** One stored object decoded as UTF-8, or `undefined`. */
  text(workspaceId: string, path: string): Promise<string | undefined>
  acquire(
    request: WorkspaceStorageAcquireRequest,
  ): Promise<WorkspaceStorageLease<{ readonly kind: "memory-workspace-storage"; readonly workspaceId: string }>>
}
