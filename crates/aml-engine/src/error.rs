//! Errors the engine itself detects. Each message is part of the public contract (INVENTORY
//! §1.1–1.4) and is surfaced by the facade as an `EvaluationError` with exactly this text.

use thiserror::Error;

use crate::span_id::SpanId;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EvalError {
    #[error("AML arrays cannot contain cycles")]
    ArrayCycle,
    #[error("AML nodes cannot contain cycles")]
    NodeCycle,
    /// `typeof` of the offending value, as JavaScript spells it.
    #[error("AML cannot render a value of type {0}")]
    CannotRender(String),
    #[error("AML does not support intrinsic or unknown JSX element types")]
    UnknownElement,
    #[error("AML evaluation exceeded maxDepth {0}")]
    MaxDepth(u64),
    /// `<System>`, `<FollowUp>`, `<Tool>`… outside an Agent plan.
    #[error("<{0}> is only valid inside <Agent>")]
    OnlyInsideAgent(&'static str),
    #[error("nested <{0}> descriptors are invalid")]
    NestedDescriptor(&'static str),
    #[error("<FollowUp> must be an immediate message descriptor of <Agent>")]
    FollowUpNotImmediate,
    #[error("<{0}> is invalid inside <FollowUp>")]
    InvalidInsideFollowUp(&'static str),
    #[error("<{0}> must resolve to non-empty text")]
    EmptyContent(&'static str),
    #[error("non-whitespace Agent text cannot follow <FollowUp>")]
    TextAfterFollowUp,
    #[error("Agent declares duplicate Tool \"{0}\"")]
    DuplicateTool(String),
    #[error("Tool \"{0}\" is not allowed by this runtime")]
    ToolNotAllowed(String),
    #[error("Agent declares duplicate MCP server \"{0}\"")]
    DuplicateMcpServer(String),
    #[error("Agent declares duplicate Skill package \"{0}\"")]
    DuplicateSkill(String),
    #[error("MCP server \"{0}\" is not allowed by this runtime")]
    McpServerNotAllowed(String),
    #[error("Agent {0} has no provider")]
    NoProvider(SpanId),
    #[error("Agent {0} exceeded maxTurnsPerAgent {1}")]
    MaxTurns(SpanId, u64),
    #[error("AML evaluation exceeded maxAgentCalls {0} at Agent {1}")]
    MaxAgentCalls(u64, SpanId),
    /// `(limit, Agent, tokens counted)`: the reported usage reached the budget (issue 37).
    #[error("AML evaluation reached maxTokens {0} at Agent {1} ({2} tokens used)")]
    MaxTokens(u64, SpanId, u64),
    /// A provider's `usage` failed validation (crate::usage).
    #[error("Agent {0} {1}")]
    BadUsage(SpanId, crate::usage::BadUsage),
    #[error("Structured evaluate() must resolve to exactly one <Agent>")]
    StructuredNotOneAgent,
    #[error("Structured evaluate() cannot include text outside its <Agent>")]
    StructuredTextOutside,
    /// Loop render selection (INVENTORY LP-1): text, another primitive, no Agent or a
    /// second Agent outside the selected one.
    #[error("<Loop> render must resolve to exactly one <Agent>")]
    LoopRenderNotOneAgent,
    #[error("<Loop> render arrays cannot contain cycles")]
    LoopRenderArrayCycle,
    #[error("<Loop> render nodes cannot contain cycles")]
    LoopRenderNodeCycle,
    /// `(limit, Loop name, iteration)`.
    #[error("AML evaluation exceeded maxStateTransitions {0} at Loop \"{1}\" iteration {2}")]
    MaxStateTransitions(u64, String, u64),
    /// A second `<Workspace>` in one domain (root and nested `evaluate()` tasks alike).
    #[error("An AML evaluation may contain at most one <Workspace>")]
    SecondWorkspace,
    /// A `<Workspace>` below a scope, an Agent channel or a scope's private input.
    #[error("<Workspace> must be a top-level resource boundary")]
    WorkspaceNotTopLevel,
    /// A driver broke the protocol (RT-5 style invariant); reachable only on bugs.
    #[error("{0}")]
    Invariant(&'static str),
}

impl EvalError {
    /// The JavaScript error `name` the facade uses for this error.
    pub fn js_name(&self) -> &'static str {
        "EvaluationError"
    }
}
