//! Streamed execs of the Docker Sandbox (`SpawnedExec`, `lib/sandbox/docker/process.js`): an
//! integer-keyed table like `src/process/local.rs`, pull-style reads, writes, stdin close, wait.

use std::sync::Arc;

use aml_docker::{Docker, ExecSpec, SpawnedExec};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;
use crate::process::docker::{outcome, parse};

static SPAWNED: Handles<SpawnedExec> = Handles::new();

fn spawned(handle: u32) -> Result<Arc<SpawnedExec>> {
    SPAWNED
        .get(handle)
        .ok_or_else(|| Error::from_reason("AML Docker process handle is closed"))
}

/// Starts `spec` in `container` with stdin open; resolves the handle (as text) or the fault.
#[napi(ts_return_type = "Promise<DockerOutcome>")]
pub fn docker_spawn(
    env: &Env,
    socket: String,
    version: String,
    container: String,
    spec: String,
) -> Result<Object<'_>> {
    let spec: ExecSpec = guard(|| parse(&spec))?;
    let work = async move {
        let docker = Docker::new(socket, version);
        let started = SpawnedExec::start(&docker, &container, &spec)
            .await
            .map(|child| SPAWNED.insert_shared(child).to_string());
        Ok(outcome(started))
    };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// The next chunk of stdout (`stream` 1) or stderr (2); `null` at the end.
#[napi(ts_return_type = "Promise<Buffer | null>")]
pub fn docker_spawn_read(env: &Env, handle: u32, stream: u32) -> Result<Object<'_>> {
    let child = guard(|| spawned(handle))?;
    let work = async move { Ok(child.read(stream == 2).await) };
    spawn_promise(env, work, |_, bytes| Ok(bytes.map(Buffer::from)))
}

/// Writes to stdin; resolves `value` "written", or "closed" once stdin is closed, or the fault.
#[napi(ts_return_type = "Promise<DockerOutcome>")]
pub fn docker_spawn_write(env: &Env, handle: u32, bytes: Buffer) -> Result<Object<'_>> {
    let child = guard(|| spawned(handle))?;
    let bytes = guard(|| Ok(bytes.to_vec()))?;
    let work = async move {
        let written = child.write(&bytes).await;
        Ok(outcome(written.map(|open| {
            if open { "written" } else { "closed" }.to_string()
        })))
    };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// Closes stdin (the process reads EOF). Repeatable.
#[napi(ts_return_type = "Promise<void>")]
pub fn docker_spawn_close_stdin(env: &Env, handle: u32) -> Result<Object<'_>> {
    let child = guard(|| spawned(handle))?;
    let work = async move {
        child.close_stdin().await;
        Ok(())
    };
    spawn_promise(env, work, |_, ()| Ok(()))
}

/// Waits for the exec to end: its exit code (as text) or the fault.
#[napi(ts_return_type = "Promise<DockerOutcome>")]
pub fn docker_spawn_wait(env: &Env, handle: u32) -> Result<Object<'_>> {
    let child = guard(|| spawned(handle))?;
    let work = async move { Ok(outcome(child.wait().await.map(|code| code.to_string()))) };
    spawn_promise(env, work, |_, value| Ok(value))
}

/// Forgets a streamed exec (its reader ends with the connection).
#[napi]
pub fn docker_spawn_release(handle: u32) -> Result<()> {
    guard(|| {
        SPAWNED.remove(handle);
        Ok(())
    })
}
