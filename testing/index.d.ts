// Types of @aml-jsx/sdk/testing: credential-free fixtures and provider conformance helpers.

import type {
  AgentExecutionContext,
  AgentProvider,
  AgentRequest,
  AgentResponse,
  SandboxSession,
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
   * @throws {TypeError} `Deterministic Agent provider name must not be empty` and
   *   `Deterministic Agent provider name must already be normalized`.
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
  })
  readonly name: string
  /** A frozen snapshot of the recorded calls, in provider execution order; entries are frozen. */
  get calls(): readonly Readonly<{ context: AgentExecutionContext; request: AgentRequest }>[]
  /** `options.supportsSandbox?.(sandbox) === true`. */
  supportsSandbox(sandbox: SandboxSession): boolean
  /** Rejects a pre-aborted signal with its reason, records the call, then awaits `respond`. */
  run(request: AgentRequest, context: AgentExecutionContext): Promise<AgentResponse>
}

/**
 * A frozen {@link AgentExecutionContext} for calling a provider outside an evaluation.
 * Defaults: `events` whose `on`/`once` do nothing and return no-op unsubscribers, a fresh
 * never-aborted signal, and `trace` `{ runId: "agent-test", spanId: "agent-test" }`. The
 * context carries no AML observability service, so no spans are emitted through it.
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
