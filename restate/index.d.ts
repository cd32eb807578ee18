// @aml-jsx/sdk/restate: AML workflows as durable Restate workflows (docs/DURABLE.md).
// Needs Node.js 22 or newer and the optional peer dependency @restatedev/restate-sdk.
import type * as restate from "@restatedev/restate-sdk"
import type { AmlEvaluationOptions, AmlJournal, AmlRenderable, AmlRuntime } from "../index.js"

/** How long Restate may see no activity from a run before asking it to suspend (default 24 h). */
export declare const DEFAULT_INACTIVITY_TIMEOUT: Readonly<{ hours: number }>
/** How long after that before Restate aborts the attempt (default 10 min). */
export declare const DEFAULT_ABORT_TIMEOUT: Readonly<{ minutes: number }>

export interface AmlWorkflowOptions<I> {
  /** The Restate workflow's name (the ingress path `/<name>/<workflowId>/run`). */
  readonly name: string
  /** The Restate ingress URL as the workers reach it (the journal object is called there). */
  readonly ingress: string
  /**
   * Headers sent with every journal request to the ingress (e.g. authentication);
   * `x-aml-journal-attempt` and `x-aml-journal-run` are the workflow's own.
   */
  readonly ingressHeaders?: Readonly<Record<string, string>> | undefined
  /** Per-request timeout of the journal's ingress calls (default 30,000 ms, at most 2³²−1). */
  readonly journalTimeoutMs?: number | undefined
  /**
   * The secret every worker of the deployment shares (at least 32 characters; default: the
   * `AML_RESTATE_JOURNAL_SECRET` environment variable). Journal entries are sealed with it:
   * an entry no worker of this deployment wrote is never replayed (docs/DURABLE.md, "Trust").
   */
  readonly journalSecret?: string | undefined
  /** The Virtual Object that keeps the journal (default `<name>Journal`). */
  readonly journalName?: string | undefined
  /** The runtime that evaluates, or a function building it per attempt. */
  readonly runtime: AmlRuntime | ((input: I, ctx: restate.WorkflowContext) => AmlRuntime | PromiseLike<AmlRuntime>)
  /** Builds the AML tree from the workflow's input (called on every attempt). */
  readonly render: (input: I, ctx: restate.WorkflowContext) => AmlRenderable | PromiseLike<AmlRenderable>
  /** More evaluate() options; `journal` and `signal` are the workflow's own. */
  readonly evaluate?: Omit<AmlEvaluationOptions, "journal" | "signal"> | undefined
  /** Restate workflow options, over the defaults for long Agent calls. */
  readonly options?: restate.WorkflowOptions | undefined
}

export interface AmlWorkflow {
  /** The workflow (`run` evaluates the tree). */
  readonly workflow: restate.WorkflowDefinition<string, any>
  /** The Virtual Object keeping each workflow's journal; bind it to the same endpoint. */
  readonly journal: restate.VirtualObjectDefinition<string, any>
}

/** Defines the workflow and its journal object (loads @restatedev/restate-sdk). */
export declare function amlWorkflow<I = unknown>(options: AmlWorkflowOptions<I>): Promise<AmlWorkflow>

export interface RestateJournalOptions {
  readonly ingress: string
  readonly object: string
  readonly key: string
  /** The secret that seals entries (at least 32 characters), the same for every writer and reader. */
  readonly secret: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Per-request timeout (default 30,000 ms, at most 2³²−1). */
  readonly timeoutMs?: number | undefined
  /** The run of the workflow this journal belongs to (sent as `x-aml-journal-run`; default none). */
  readonly run?: string | undefined
  /**
   * A token unique to this attempt, sent as `x-aml-journal-attempt` (over any header of that
   * name in `headers`): once an attempt's load stored its token, the object refuses records of
   * any other (docs/DURABLE.md, "The attempt fence").
   */
  readonly attempt?: string | undefined
}

/** The AmlJournal kept in the journal object `object` keyed `key`; close() when done. */
export declare function createRestateJournal(options: RestateJournalOptions): AmlJournal & { close(): void }
