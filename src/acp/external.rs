//! Binding for ACP sessions over an external process (Sandbox launch): the JS pump in
//! `lib/agents/acp/sandbox-process.js` moves bytes between the Sandbox's `SandboxProcess` streams
//! and the session (`crates/aml-acp/src/transport.rs`), reports the exit and performs kills.
//! Ports are keyed by the session's handle and forgotten with it; a Sandbox MCP relay's port
//! (`src/acp/relay.rs`) is keyed by its relay handle with [`RELAY_PORT_BIT`] set, so the same
//! pump serves both.

use aml_acp::{external, ExternalExit, Pipe, Session};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Result};
use napi_derive::napi;

use crate::acp::ports::{port, register};
use crate::acp::session::{insert, parse_config};
use crate::boundary::async_runtime::{runtime, spawn_promise};
use crate::boundary::guard::guard;

fn pipe(which: u32) -> Pipe {
    if which == 2 {
        Pipe::Stderr
    } else {
        Pipe::Stdout
    }
}

/// Starts a session over an already started external process with execution id `id`.
#[napi]
pub fn acp_session_start_external(config: String, id: String) -> Result<u32> {
    guard(|| {
        let config = parse_config(&config)?;
        let _entered = runtime().enter();
        let (agent, port) = external(id);
        let handle = insert(Session::start_external(config, agent));
        register(handle, port);
        Ok(handle)
    })
}

/// Feeds a stdout (1) or stderr (2) chunk; resolves `false` once the session stopped reading.
#[napi(ts_return_type = "Promise<boolean>")]
pub fn acp_external_feed(env: &Env, handle: u32, which: u32, chunk: Buffer) -> Result<Object<'_>> {
    let port = guard(|| port(handle))?;
    let bytes = guard(|| Ok(chunk.to_vec()))?;
    let fed = async move { Ok(port.feed(pipe(which), bytes).await) };
    spawn_promise(env, fed, |_, ok| Ok(ok))
}

/// End of stdout (1) or stderr (2).
#[napi]
pub fn acp_external_end(handle: u32, which: u32) -> Result<()> {
    guard(|| {
        if let Ok(port) = port(handle) {
            port.end(pipe(which));
        }
        Ok(())
    })
}

/// The next bytes for stdin; `null` when stdin is to be closed.
#[napi(ts_return_type = "Promise<Buffer | null>")]
pub fn acp_external_input(env: &Env, handle: u32) -> Result<Object<'_>> {
    let port = guard(|| port(handle))?;
    let next = async move { Ok(port.next_input().await) };
    spawn_promise(env, next, |_, bytes| Ok(bytes.map(Buffer::from)))
}

/// The process ended: with `code`, from `signal` (a number), or its wait failed (`error`).
#[napi]
pub fn acp_external_exited(
    handle: u32,
    code: Option<i32>,
    signal: Option<i32>,
    error: Option<String>,
) -> Result<()> {
    guard(|| {
        let exit = match (code, signal) {
            (Some(code), _) => ExternalExit::Exited(code),
            (None, Some(signal)) => ExternalExit::Signaled(signal),
            (None, None) => ExternalExit::Failed(error.unwrap_or_default()),
        };
        if let Ok(port) = port(handle) {
            port.exited(exit);
        }
        Ok(())
    })
}

/// Resolves when the session wants the process tree killed.
#[napi(ts_return_type = "Promise<void>")]
pub fn acp_external_kill_requested(env: &Env, handle: u32) -> Result<Object<'_>> {
    let port = guard(|| port(handle))?;
    let asked = async move {
        port.kill_requested().await;
        Ok(())
    };
    spawn_promise(env, asked, |_, ()| Ok(()))
}

/// The requested kill finished.
#[napi]
pub fn acp_external_killed(handle: u32) -> Result<()> {
    guard(|| {
        if let Ok(port) = port(handle) {
            port.killed();
        }
        Ok(())
    })
}
