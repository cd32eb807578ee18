//! A scripted native "provider" for tests of native-provider ports: instead of asking a
//! model, it calls the granted Tools with inputs fixed in advance and reports every outcome.
//! It exercises exactly the path a real native provider (ACP, the MCP bridge) takes —
//! [`ToolInvoker`] from a tokio task — without any model or agent process.

use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::tool::{ToolCallError, ToolInvoker, ToolSpec};

/// One scripted Tool call: the granted Tool's name and the JSON input a model would send.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptStep {
    pub tool: String,
    pub input: Value,
}

/// What the provider does on each run.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub steps: Vec<ScriptStep>,
    /// All steps at once (like a model's parallel tool calls) instead of one after another.
    #[serde(default)]
    pub concurrent: bool,
}

/// The outcome of one run, in step order.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptReport {
    pub outcomes: Vec<Result<Value, ToolCallError>>,
    /// The run's token was cancelled; a sequential script stops before its next step.
    pub cancelled: bool,
}

impl ScriptReport {
    /// One JSON object per outcome and line: `{"ok":true,"value":…}` or
    /// `{"ok":false,"kind":…,"name":…,"message":…}`. This is the provider's response text.
    pub fn text(&self) -> String {
        let lines: Vec<String> = self
            .outcomes
            .iter()
            .map(|outcome| {
                match outcome {
                    Ok(value) => json!({ "ok": true, "value": value }),
                    Err(error) => json!({
                        "ok": false,
                        "kind": error.kind.label(),
                        "name": error.name,
                        "message": error.message,
                    }),
                }
                .to_string()
            })
            .collect();
        lines.join("\n")
    }
}

async fn call_step(
    invoker: &dyn ToolInvoker,
    tools: &[ToolSpec],
    step: &ScriptStep,
    cancel: &CancellationToken,
) -> Result<Value, ToolCallError> {
    // A model can name a Tool it was not given; the provider must report that, not crash.
    let Some(spec) = tools.iter().find(|spec| spec.name == step.tool) else {
        return Err(ToolCallError::unavailable(format!(
            "Tool \"{}\" is not granted to this Agent",
            step.tool
        )));
    };
    invoker
        .call(spec.tool, step.input.clone(), cancel.child_token())
        .await
}

/// Runs `script` against the granted `tools` through `invoker`.
pub async fn run_script(
    invoker: &dyn ToolInvoker,
    tools: &[ToolSpec],
    script: &Script,
    cancel: &CancellationToken,
) -> ScriptReport {
    let outcomes = if script.concurrent {
        join_all(
            script
                .steps
                .iter()
                .map(|step| call_step(invoker, tools, step, cancel)),
        )
        .await
    } else {
        let mut outcomes = Vec::with_capacity(script.steps.len());
        for step in &script.steps {
            if cancel.is_cancelled() {
                break;
            }
            outcomes.push(call_step(invoker, tools, step, cancel).await);
        }
        outcomes
    };
    ScriptReport {
        outcomes,
        cancelled: cancel.is_cancelled(),
    }
}
