//! The Tool port: how a Rust-native provider (the ACP engine, an MCP bridge, a test
//! provider) calls a Tool that the evaluation granted to its Agent.
//!
//! The provider never sees the Tool itself, only [`ToolSpec`]s: an opaque [`ToolRef`] plus
//! what a model needs to choose and call it. The host behind [`ToolInvoker`] (the napi
//! binding, a fake in tests) runs the Tool through the same validation pipeline as a JS
//! provider would, and reports every failure as data ([`ToolCallError`]) so the provider can
//! hand it to its model instead of aborting the turn.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// An opaque handle to one granted Tool, valid while the provider call that received it runs.
/// Only the invoker that issued it can resolve it; after the call it resolves to nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(transparent)]
pub struct ToolRef(pub u32);

/// One Tool granted to the Agent, as a provider advertises it to a model.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    #[serde(rename = "ref")]
    pub tool: ToolRef,
    pub name: String,
    pub description: String,
    /// The Tool's input JSON Schema (draft 2020-12), exactly as the host generated it.
    pub input_schema: Value,
}

/// Why a Tool call produced no output. The host classifies; the provider reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolErrorKind {
    /// The input failed validation (JS `ToolInputError`); the executor never ran.
    Input,
    /// The executor's output failed validation or was not JSON (JS `ToolOutputError`).
    Output,
    /// The executor threw or rejected with anything else.
    Failed,
    /// The call was cancelled (the caller's token, or the evaluation's abort); `name` and
    /// `message` describe the abort reason when the host knows it.
    Cancelled,
    /// The host could not run the call at all (a Tool not granted, the host shutting down, a
    /// broken host callback). Not the Tool's fault.
    Unavailable,
}

impl ToolErrorKind {
    /// Stable lowercase label, for reports and logs.
    pub fn label(self) -> &'static str {
        match self {
            ToolErrorKind::Input => "input",
            ToolErrorKind::Output => "output",
            ToolErrorKind::Failed => "failed",
            ToolErrorKind::Cancelled => "cancelled",
            ToolErrorKind::Unavailable => "unavailable",
        }
    }
}

/// A failed Tool call as data: the JS error class name and message, ready for a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {message}")]
pub struct ToolCallError {
    pub kind: ToolErrorKind,
    /// The thrown value's class name (`ToolInputError`, `TypeError`, …).
    pub name: String,
    pub message: String,
}

impl ToolCallError {
    /// Classifies a JS failure by its error name; `aborted` says it was the abort reason.
    pub fn from_js(name: String, message: String, aborted: bool) -> Self {
        let kind = if aborted {
            ToolErrorKind::Cancelled
        } else {
            match name.as_str() {
                "ToolInputError" => ToolErrorKind::Input,
                "ToolOutputError" => ToolErrorKind::Output,
                _ => ToolErrorKind::Failed,
            }
        };
        ToolCallError {
            kind,
            name,
            message,
        }
    }

    /// A call cancelled before the host reported why (or that never reached the host).
    pub fn cancelled() -> Self {
        ToolCallError {
            kind: ToolErrorKind::Cancelled,
            name: "AbortError".into(),
            message: "The Tool call was cancelled".into(),
        }
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        ToolCallError {
            kind: ToolErrorKind::Unavailable,
            name: "Error".into(),
            message: message.into(),
        }
    }
}

/// Calls granted Tools on behalf of a native provider.
///
/// Contract for implementations: the future always completes. Cancelling `cancel` makes it
/// complete promptly (a host may wait briefly for its side to confirm the abort, never
/// indefinitely) with a [`ToolErrorKind::Cancelled`] error, unless the call had already
/// finished. A call whose `cancel` is already cancelled does not start.
#[async_trait]
pub trait ToolInvoker: Send + Sync {
    async fn call(
        &self,
        tool: ToolRef,
        input: Value,
        cancel: CancellationToken,
    ) -> Result<Value, ToolCallError>;
}
