//! The test-only Rust-native provider behind `nativeScriptedProvider()` (@aml-jsx/sdk/testing):
//! a tokio task that calls the granted JS Tools through the dispatcher, exactly as a native
//! provider (ACP, the MCP bridge) will. The script logic lives in `aml_ports::run_script`.

use aml_ports::{run_script, Script, ToolSpec};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::evaluation::cancellation;
use crate::tools::dispatch as tool_dispatch;

/// One finished run: the response text (one JSON outcome per line) and whether its token
/// was cancelled.
#[napi(object)]
pub struct ScriptResult {
    pub text: String,
    pub cancelled: bool,
}

fn parse_script(script: &str) -> std::result::Result<Script, String> {
    serde_json::from_str(script).map_err(|error| error.to_string())
}

/// Why `script` (JSON) is not a valid native script, or `null`. The facade checks once, when
/// the provider is created, so a bad plan fails there and not inside an evaluation.
#[napi]
pub fn native_script_problem(script: String) -> Result<Option<String>> {
    guard(|| Ok(parse_script(&script).err()))
}

/// Runs `script` (JSON) against `tools` (JSON `[{ ref, name, description, inputSchema }]`)
/// on the shared runtime; `cancellation` is a token from `cancellationCreate`.
#[napi(ts_return_type = "Promise<ScriptResult>")]
pub fn native_script_run(
    env: &Env,
    cancellation: u32,
    script: String,
    tools: String,
) -> Result<Object<'_>> {
    let (dispatcher, cancel, script, tools) = guard(|| {
        let invalid = |detail: String| Error::new(Status::InvalidArg, detail);
        let script = parse_script(&script).map_err(invalid)?;
        let tools: Vec<ToolSpec> =
            serde_json::from_str(&tools).map_err(|error| invalid(error.to_string()))?;
        let dispatcher = tool_dispatch::current()?;
        Ok((
            dispatcher,
            cancellation::token(cancellation)?,
            script,
            tools,
        ))
    })?;
    let run = async move {
        let report = run_script(&*dispatcher, &tools, &script, &cancel).await;
        Ok(ScriptResult {
            text: report.text(),
            cancelled: report.cancelled,
        })
    };
    spawn_promise(env, run, |_, result| Ok(result))
}
