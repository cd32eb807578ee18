//! The filesystem store as a plain adapter: the methods of `FilesystemWorkspaceStorage` when
//! it is called directly (lib/workspace/filesystem-storage.js), leases keyed by small integers.

use std::path::PathBuf;

use aml_workspace::fs_storage::FilesystemLease;
use aml_workspace::{
    FilesystemStorage, Limited, StorageLease, Version, WriteBody, WriteCondition, WriteOptions,
};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Result};
use napi_derive::napi;

use super::outcome::{done, lookup, WorkspaceOutcome};
use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;

static FS_LEASES: Handles<FilesystemLease> = Handles::new();

#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_acquire(
    env: &Env,
    directory: String,
    id: String,
    lock: bool,
) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                let lease = FilesystemStorage::new(PathBuf::from(directory))
                    .open(&id, lock)
                    .await?;
                let root = lease.root().to_string_lossy().into_owned();
                let handle = FS_LEASES.insert(lease);
                Ok(WorkspaceOutcome {
                    handle: Some(handle),
                    directory: Some(root),
                    ..Default::default()
                })
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

/// Reads at most `max_bytes` (the whole object when `None`).
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_read(env: &Env, lease: u32, path: String) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                let lease = lookup(&FS_LEASES, lease)?;
                match lease.read(&path, u64::MAX).await? {
                    None => Ok(WorkspaceOutcome {
                        found: Some(false),
                        ..Default::default()
                    }),
                    Some(object) => {
                        let body = match object.body.collect(u64::MAX - 1).await? {
                            Limited::Within(bytes) => bytes,
                            Limited::Exceeded => Vec::new(),
                        };
                        Ok(WorkspaceOutcome {
                            found: Some(true),
                            body: Some(body.into()),
                            version: Some(object.version.0),
                            ..Default::default()
                        })
                    }
                }
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

/// `condition`: `null`, `"absent"` or the expected version value.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_write(
    env: &Env,
    lease: u32,
    path: String,
    body: Buffer,
    absent: bool,
    version: Option<String>,
) -> Result<Object<'_>> {
    let bytes = guard(|| Ok(body.to_vec()))?;
    let run = async move {
        Ok(done(
            async {
                let lease = lookup(&FS_LEASES, lease)?;
                let condition = match (absent, version) {
                    (true, _) => WriteCondition::Absent,
                    (false, Some(version)) => WriteCondition::Version(Version(version)),
                    (false, None) => WriteCondition::None,
                };
                let written = lease
                    .write(&path, WriteBody::Bytes(bytes), WriteOptions::new(condition))
                    .await?;
                Ok(WorkspaceOutcome {
                    version: Some(written.0),
                    ..Default::default()
                })
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_list(env: &Env, lease: u32, prefix: String) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                let paths = lookup(&FS_LEASES, lease)?.list(&prefix).await?;
                Ok(WorkspaceOutcome {
                    paths: Some(paths),
                    ..Default::default()
                })
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_delete(env: &Env, lease: u32, paths: Vec<String>) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                lookup(&FS_LEASES, lease)?.delete(&paths).await?;
                Ok(WorkspaceOutcome::default())
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn filesystem_storage_release(env: &Env, lease: u32) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                let Some(lease) = FS_LEASES.remove(lease) else {
                    return Ok(WorkspaceOutcome::default());
                };
                lease.release().await?;
                Ok(WorkspaceOutcome::default())
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}
