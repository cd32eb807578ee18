//! One-shot execution for `<Script>` host runs: spawn, close stdin, collect bounded output,
//! tear the group down, all in one Promise (one JS → Rust round trip per Script).
//!
//! Cancellation: the facade creates a token (`cancellationCreate`, src/evaluation/cancellation.rs) before
//! calling [`process_exec`] and cancels it from its abort listener; the supervisor then kills
//! the tree and the exec resolves with the "cancelled" fault once the group is reaped. The
//! exec releases its token when it finishes, so a late cancel is a no-op.

use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::process::local::{options, Exit, Fault};

/// What a finished exec produced: the exit (or the fault) and the raw output bytes.
#[napi(object)]
pub struct ExecOutcome {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub fault: Option<Fault>,
    pub stdout: Option<Buffer>,
    pub stderr: Option<Buffer>,
}

/// Runs `command` to completion with stdin closed; see the module docs. `child_env` is the
/// complete environment as flat pairs; `output_limit` bounds stdout+stderr together.
#[napi(ts_return_type = "Promise<ExecOutcome>")]
#[allow(clippy::too_many_arguments)]
pub fn process_exec(
    env: &Env,
    command: String,
    args: Vec<String>,
    cwd: String,
    child_env: Vec<String>,
    timeout_ms: Option<f64>,
    output_limit: Option<f64>,
    cancellation: Option<u32>,
) -> Result<Object<'_>> {
    let mut options = options(cwd, child_env, timeout_ms, output_limit);
    options.cancel = cancellation.and_then(|id| crate::evaluation::cancellation::token(id).ok());
    let run = async move {
        let result = aml_process::exec(&command, &args, options).await;
        if let Some(id) = cancellation {
            crate::evaluation::cancellation::release(id);
        }
        Ok(result)
    };
    spawn_promise(env, run, |_, result| {
        Ok(match result {
            Ok(output) => {
                let exit = Exit::from_result(&Ok(output.exit));
                ExecOutcome {
                    exit_code: exit.exit_code,
                    signal: exit.signal,
                    fault: None,
                    stdout: Some(output.stdout.into()),
                    stderr: Some(output.stderr.into()),
                }
            }
            Err(error) => ExecOutcome {
                exit_code: None,
                signal: None,
                fault: Some((&error).into()),
                stdout: None,
                stderr: None,
            },
        })
    })
}

/// Whether the process runtime was ever started in this addon instance.
#[napi]
pub fn process_runtime_started() -> Result<bool> {
    guard(|| Ok(crate::boundary::async_runtime::started()))
}
