//! Errors the engine itself detects. Each message is part of the public contract (INVENTORY
//! §1.1) and is surfaced by the facade as an `EvaluationError` with exactly this text.

use thiserror::Error;

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
