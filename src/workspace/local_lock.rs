//! The local Workspace lock (BW-1, `localWorkspace`): `<real dir>.lock`, the
//! proper-lockfile-compatible `aml_workspace::DirLock`, held locks keyed by small integers.

use std::path::Path;

use aml_workspace::{DirLock, LockFailure, LockPolicy, ReleaseFailure, WorkspaceError};
use napi::bindgen_prelude::Object;
use napi::{Env, Result};
use napi_derive::napi;

use super::outcome::{done, lookup, WorkspaceOutcome};
use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;

static LOCKS: Handles<DirLock> = Handles::new();

/// Resolves `directory` (symlinks included), requires a directory, and with `lock` takes
/// `<real dir>.lock`. `found: false` means another holder has the lock (the facade throws
/// `WorkspaceConflictError` for the request's id); `directory` is the physical directory.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn local_workspace_acquire(env: &Env, directory: String, lock: bool) -> Result<Object<'_>> {
    let run = async move {
        let outcome = tokio::task::spawn_blocking(move || local_acquire(&directory, lock))
            .await
            .unwrap_or_else(|error| Err(WorkspaceError::error(error.to_string())));
        Ok(done(outcome))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

fn local_acquire(
    directory: &str,
    lock: bool,
) -> std::result::Result<WorkspaceOutcome, WorkspaceError> {
    let cannot = || {
        WorkspaceError::error(format!(
            "Local Workspace \"{directory}\" cannot be materialized"
        ))
    };
    let not_directory =
        || WorkspaceError::error("Local Workspace materialization must be a directory");
    let real = std::fs::canonicalize(directory).map_err(|error| {
        cannot().with_cause(not_directory().with_cause(WorkspaceError::io(
            &error,
            "realpath",
            Path::new(directory),
        )))
    })?;
    if !std::fs::metadata(&real)
        .map(|m| m.is_dir())
        .unwrap_or(false)
    {
        return Err(cannot().with_cause(not_directory()));
    }
    let mut outcome = WorkspaceOutcome {
        directory: Some(real.to_string_lossy().into_owned()),
        found: Some(true),
        ..Default::default()
    };
    if lock {
        match DirLock::acquire(&real, &LockPolicy::workspace()) {
            Ok(held) => {
                held.start_refresh();
                outcome.handle = Some(LOCKS.insert(held));
            }
            Err(LockFailure::Held) => outcome.found = Some(false),
            Err(failure) => {
                return Err(WorkspaceError::error(format!(
                    "Local Workspace \"{directory}\" lock acquisition failed"
                ))
                .with_cause(failure.into_error()))
            }
        }
    }
    Ok(outcome)
}

/// `null` while lock `lock` is healthy, else why it was lost.
#[napi]
pub fn local_workspace_lock_problem(lock: u32) -> Result<Option<String>> {
    guard(|| {
        Ok(match lookup(&LOCKS, lock) {
            Ok(held) => held.check().err(),
            Err(_) => None,
        })
    })
}

/// Releases lock `lock` of the Workspace `directory` (named in the errors).
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn local_workspace_release(env: &Env, lock: u32, directory: String) -> Result<Object<'_>> {
    let run = async move {
        let failed =
            |what: &str| WorkspaceError::error(format!("Local Workspace \"{directory}\" {what}"));
        let Some(held) = LOCKS.remove(lock) else {
            return Ok(done(Err(failed("lock was not acquired"))));
        };
        let result = tokio::task::spawn_blocking(move || held.release()).await;
        Ok(done(match result {
            Ok(Ok(())) => Ok(WorkspaceOutcome::default()),
            Ok(Err(ReleaseFailure::NotHeld)) => Err(failed("lock was not acquired")),
            Ok(Err(ReleaseFailure::Compromised(reason))) => {
                Err(failed("lock was compromised").with_cause(WorkspaceError::error(reason)))
            }
            Ok(Err(ReleaseFailure::Io(error))) => {
                Err(failed("lock release failed").with_cause(error))
            }
            Err(error) => {
                Err(failed("lock release failed")
                    .with_cause(WorkspaceError::error(error.to_string())))
            }
        }))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi]
pub fn live_workspace_locks() -> Result<u32> {
    guard(|| Ok(LOCKS.len() as u32))
}
