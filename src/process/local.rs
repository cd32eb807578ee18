//! Long-lived supervised processes for `spawnLocalProcess` (PA-8): a table of live
//! `aml_process::ProcessHandle`s keyed by small integers, and pull-style async calls the JS
//! Web streams drive (one read per `pull`, one write per `write`), so no threadsafe function
//! is needed and nothing calls JS from tokio.
//!
//! Errors the JS contract distinguishes (spawn failure, timeout, …) resolve as data
//! ([`Fault`]); only broken invariants (unknown handle, panics) reject.

use std::sync::Arc;
use std::time::Duration;

use aml_process::{OutputStream, ProcessError, ProcessHandle, ProcessStdin, SpawnOptions};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;
use crate::process::pipe::Pipe;

/// A failure the facade maps onto the documented errors.
#[napi(object)]
pub struct Fault {
    /// "spawn" | "cancelled" | "timeout" | "output-limit" | "stdin-closed" | "stopped" | "io"
    pub kind: String,
    pub message: String,
    /// The OS error number, for "spawn" and "io".
    pub errno: Option<i32>,
}

impl From<&ProcessError> for Fault {
    fn from(error: &ProcessError) -> Self {
        let kind = match error {
            ProcessError::Spawn { .. } => "spawn",
            ProcessError::Cancelled => "cancelled",
            ProcessError::Timeout { .. } => "timeout",
            ProcessError::OutputLimitExceeded { .. } => "output-limit",
            ProcessError::StdinClosed => "stdin-closed",
            ProcessError::SupervisorStopped => "stopped",
            ProcessError::Io { .. } => "io",
        };
        Fault {
            kind: kind.into(),
            message: error.to_string(),
            errno: error.io_error().and_then(|e| e.raw_os_error()),
        }
    }
}

/// How a leader ended: exactly one of the three is set.
#[napi(object)]
pub struct Exit {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub fault: Option<Fault>,
}

impl Exit {
    pub(crate) fn from_result(
        result: &std::result::Result<aml_process::ExitStatus, ProcessError>,
    ) -> Self {
        match result {
            Ok(status) => Exit {
                exit_code: status.code(),
                signal: status.signal(),
                fault: None,
            },
            Err(error) => Exit {
                exit_code: None,
                signal: None,
                fault: Some(error.into()),
            },
        }
    }
}

/// `{ handle, pid }` of a started process, or the fault that prevented it.
#[napi(object)]
pub struct Started {
    pub handle: Option<u32>,
    pub pid: Option<u32>,
    pub fault: Option<Fault>,
}

struct Entry {
    process: ProcessHandle,
    stdin: Pipe<ProcessStdin>,
    stdout: Pipe<OutputStream>,
    stderr: Pipe<OutputStream>,
}

static PROCESSES: Handles<Entry> = Handles::new();

fn insert(entry: Entry) -> u32 {
    PROCESSES.insert(entry)
}

fn entry(handle: u32) -> Result<Arc<Entry>> {
    PROCESSES
        .get(handle)
        .ok_or_else(|| Error::from_reason("AML process handle is closed"))
}

/// Spawn options shared by `processSpawn` and `processExec`. `env` is the complete child
/// environment as flat `[key, value, …]` pairs: the facade builds `{...process.env, ...env}`
/// itself, so the spawner never reads `environ` while the JS thread may be writing it.
pub(crate) fn options(
    cwd: String,
    env: Vec<String>,
    timeout_ms: Option<f64>,
    output_limit: Option<f64>,
) -> SpawnOptions {
    let mut pairs = Vec::with_capacity(env.len() / 2);
    let mut flat = env.into_iter();
    while let (Some(key), Some(value)) = (flat.next(), flat.next()) {
        pairs.push((key, value));
    }
    SpawnOptions {
        cwd: Some(cwd.into()),
        env: pairs,
        inherit_env: false,
        timeout: timeout_ms.map(|ms| Duration::from_millis(ms as u64)),
        output_limit: output_limit.map(|bytes| bytes as usize),
        ..SpawnOptions::default()
    }
}

/// Starts `command` as the leader of its own process group with piped stdio.
#[napi(ts_return_type = "Promise<Started>")]
pub fn process_spawn(
    env: &Env,
    command: String,
    args: Vec<String>,
    cwd: String,
    child_env: Vec<String>,
    timeout_ms: Option<f64>,
    output_limit: Option<f64>,
) -> Result<Object<'_>> {
    let options = guard(|| Ok(options(cwd, child_env, timeout_ms, output_limit)))?;
    let started = async move {
        Ok(match aml_process::spawn(&command, &args, options).await {
            Ok(mut process) => {
                let pid = process.pid();
                let entry = Entry {
                    stdin: Pipe::new(process.take_stdin()),
                    stdout: Pipe::new(process.take_stdout()),
                    stderr: Pipe::new(process.take_stderr()),
                    process,
                };
                Started {
                    handle: Some(insert(entry)),
                    pid: Some(pid),
                    fault: None,
                }
            }
            Err(error) => Started {
                handle: None,
                pid: None,
                fault: Some((&error).into()),
            },
        })
    };
    spawn_promise(env, started, |_, started| Ok(started))
}

/// The next chunk of stdout (`stream` 1) or stderr (2); `null` at end of stream or after
/// `processCloseOutput`.
#[napi(ts_return_type = "Promise<Buffer | null>")]
pub fn process_read(env: &Env, handle: u32, stream: u32) -> Result<Object<'_>> {
    let entry = guard(|| entry(handle))?;
    let read = async move {
        let pipe = if stream == 2 {
            &entry.stderr
        } else {
            &entry.stdout
        };
        pipe.read()
            .await
            .map_err(|error| Error::from_reason(error.to_string()))
    };
    spawn_promise(env, read, |_, chunk| Ok(chunk.map(Buffer::from)))
}

/// Stops reading stdout (1) or stderr (2): our end closes, a pending read ends with `null`.
#[napi]
pub fn process_close_output(handle: u32, stream: u32) -> Result<()> {
    guard(|| {
        let entry = entry(handle)?;
        if stream == 2 {
            entry.stderr.close();
        } else {
            entry.stdout.close();
        }
        Ok(())
    })
}

/// Writes all of `data` to stdin. Rejects when stdin is closed or the child stopped reading.
#[napi(ts_return_type = "Promise<void>")]
pub fn process_write(env: &Env, handle: u32, data: Buffer) -> Result<Object<'_>> {
    let entry = guard(|| entry(handle))?;
    let bytes = guard(|| Ok(data.to_vec()))?;
    let write = async move {
        entry
            .stdin
            .write(&bytes)
            .await
            .map_err(|error| Error::from_reason(error.to_string()))
    };
    spawn_promise(env, write, |_, ()| Ok(()))
}

/// Closes stdin (the child reads EOF); interrupts a pending write. Idempotent.
#[napi]
pub fn process_close_stdin(handle: u32) -> Result<()> {
    guard(|| {
        entry(handle)?.stdin.close();
        Ok(())
    })
}

/// Terminates the whole group (TERM, grace, KILL); resolves once every member is reaped.
#[napi(ts_return_type = "Promise<void>")]
pub fn process_kill(env: &Env, handle: u32) -> Result<Object<'_>> {
    let entry = guard(|| entry(handle))?;
    let kill = async move {
        entry.process.kill().await;
        Ok(())
    };
    spawn_promise(env, kill, |_, ()| Ok(()))
}

/// The leader's memoised fate.
#[napi(ts_return_type = "Promise<Exit>")]
pub fn process_wait(env: &Env, handle: u32) -> Result<Object<'_>> {
    let entry = guard(|| entry(handle))?;
    let wait = async move { Ok(Exit::from_result(&entry.process.wait().await)) };
    spawn_promise(env, wait, |_, exit| Ok(exit))
}

/// Forgets `handle`. If the group still has members they are torn down in the background
/// (dropping the handle asks the supervisor to kill, never blocking the JS thread).
#[napi]
pub fn process_release(handle: u32) -> Result<()> {
    guard(|| {
        let removed = PROCESSES.remove(handle);
        if let Some(entry) = removed {
            entry.stdin.close();
            entry.stdout.close();
            entry.stderr.close();
        }
        Ok(())
    })
}

/// Live entries of the process table (leak checks in tests).
#[napi]
pub fn live_processes() -> Result<u32> {
    guard(|| Ok(PROCESSES.len() as u32))
}
