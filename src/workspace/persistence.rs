//! Workspace persistence entry points: sessions of `aml_workspace::Materialization` keyed by
//! small integers, the filesystem store's operations (for `FilesystemWorkspaceStorage` used
//! as a plain adapter), the local Workspace lock, and `workspaceStorageSegment`.
//!
//! Every async entry resolves a [`WorkspaceOutcome`]; a failure is `error`, the JSON of an
//! `aml_workspace::WorkspaceError`, which the facade (lib/workspace/errors.js) turns into the
//! documented JS error. Conversions only: the work is in `crates/aml-workspace`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use aml_workspace::fs_storage::FilesystemLease;
use aml_workspace::{
    Cancel, DirLock, FilesystemStorage, Format, Limited, LoadRequest, LockFailure, LockPolicy,
    Materialization, PersistenceOptions, ReleaseFailure, SaveRequest, StorageLease, Version,
    WorkspaceError, WriteBody, WriteCondition, WriteOptions,
};
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::Value;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::workspace::js_storage::JsLease;

#[napi(object)]
#[derive(Default)]
pub struct WorkspaceOutcome {
    pub ok: bool,
    pub error: Option<String>,
    /// A session, storage lease or lock handle.
    pub handle: Option<u32>,
    pub directory: Option<String>,
    pub revision_id: Option<String>,
    pub found: Option<bool>,
    pub body: Option<Buffer>,
    pub version: Option<String>,
    pub paths: Option<Vec<String>>,
}

fn done(result: std::result::Result<WorkspaceOutcome, WorkspaceError>) -> WorkspaceOutcome {
    match result {
        Ok(mut outcome) => {
            outcome.ok = true;
            outcome
        }
        Err(error) => WorkspaceOutcome {
            error: Some(error.to_json()),
            ..Default::default()
        },
    }
}

struct Table<T> {
    live: HashMap<u32, Arc<T>>,
    next: u32,
}

impl<T> Table<T> {
    fn new() -> Self {
        Table {
            live: HashMap::new(),
            next: 0,
        }
    }
    fn insert(&mut self, value: T) -> u32 {
        loop {
            self.next = self.next.wrapping_add(1).max(1);
            if !self.live.contains_key(&self.next) {
                break;
            }
        }
        self.live.insert(self.next, Arc::new(value));
        self.next
    }
}

type Session = tokio::sync::Mutex<Materialization>;
static SESSIONS: LazyLock<Mutex<Table<Session>>> = LazyLock::new(|| Mutex::new(Table::new()));
static FS_LEASES: LazyLock<Mutex<Table<FilesystemLease>>> =
    LazyLock::new(|| Mutex::new(Table::new()));
static LOCKS: LazyLock<Mutex<Table<DirLock>>> = LazyLock::new(|| Mutex::new(Table::new()));
static CANCELS: LazyLock<Mutex<Table<Cancel>>> = LazyLock::new(|| Mutex::new(Table::new()));

/// A cancellation for one restore or save; the facade fires it from the abort signal.
#[napi]
pub fn workspace_cancellation() -> u32 {
    insert(&CANCELS, Cancel::new())
}

/// Fires cancellation `handle` (the running restore or save stops at its next file).
#[napi]
pub fn workspace_cancel(handle: u32) {
    if let Ok(cancel) = lookup(&CANCELS, handle) {
        cancel.cancel();
    }
}

/// Forgets cancellation `handle` once its call settled.
#[napi]
pub fn workspace_cancellation_done(handle: u32) {
    remove(&CANCELS, handle);
}

/// The cancellation registered as `handle` (0: none).
fn cancellation(handle: u32) -> Cancel {
    lookup(&CANCELS, handle)
        .map(|cancel| (*cancel).clone())
        .unwrap_or_default()
}

fn lookup<T>(table: &Mutex<Table<T>>, id: u32) -> std::result::Result<Arc<T>, WorkspaceError> {
    let table = table.lock().unwrap_or_else(|p| p.into_inner());
    table
        .live
        .get(&id)
        .cloned()
        .ok_or_else(|| WorkspaceError::error("AML workspace handle is closed"))
}

fn remove<T>(table: &Mutex<Table<T>>, id: u32) -> Option<Arc<T>> {
    table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .live
        .remove(&id)
}

fn insert<T>(table: &Mutex<Table<T>>, value: T) -> u32 {
    table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(value)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array().map(|items| {
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

fn parse_options(json: &str) -> PersistenceOptions {
    let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let mut options = PersistenceOptions::new(PathBuf::from(
        value["temporaryDirectory"].as_str().unwrap_or("/tmp"),
    ));
    options.format = value["format"]
        .as_str()
        .and_then(Format::parse)
        .unwrap_or(Format::Archive);
    let number = |key: &str, default: u64| value[key].as_u64().unwrap_or(default);
    options.max_archive_bytes = number("maxArchiveBytes", options.max_archive_bytes);
    options.max_entries = number("maxEntries", options.max_entries);
    options.max_extracted_bytes = number("maxExtractedBytes", options.max_extracted_bytes);
    options
}

fn parse_load(json: Option<String>) -> Option<LoadRequest> {
    let value: Value = serde_json::from_str(&json?).ok()?;
    Some(LoadRequest {
        revision: value["revision"].as_str().unwrap_or("current").into(),
        include: strings(&value["include"]),
        exclude: strings(&value["exclude"]).unwrap_or_default(),
    })
}

fn parse_save(json: &str) -> SaveRequest {
    let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let defaults = SaveRequest::default();
    SaveRequest {
        include: strings(&value["include"]),
        exclude: strings(&value["exclude"]).unwrap_or_default(),
        gitignore: value["gitignore"].as_bool().unwrap_or(defaults.gitignore),
        retention: value["retention"]
            .as_u64()
            .map(|n| n as usize)
            .unwrap_or(defaults.retention),
    }
}

async fn materialize(
    lease: Box<dyn StorageLease>,
    options: String,
    load: Option<String>,
    cancel: Cancel,
) -> std::result::Result<WorkspaceOutcome, WorkspaceError> {
    let materialization = Materialization::acquire_cancellable(
        lease,
        parse_options(&options),
        parse_load(load),
        &cancel,
    )
    .await?;
    let directory = materialization.directory().to_string_lossy().into_owned();
    let revision_id = materialization.revision_id().map(str::to_owned);
    let handle = insert(&SESSIONS, tokio::sync::Mutex::new(materialization));
    Ok(WorkspaceOutcome {
        handle: Some(handle),
        directory: Some(directory),
        revision_id,
        ..Default::default()
    })
}

/// Acquires identity `id` in the filesystem store at `directory` and materializes it.
/// `revision_id` of the outcome is the restored revision; `version` carries the storage root.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn workspace_filesystem_acquire(
    env: &Env,
    directory: String,
    id: String,
    lock: bool,
    options: String,
    load: Option<String>,
    cancel: u32,
) -> Result<Object<'_>> {
    let cancel = cancellation(cancel);
    let run = async move {
        Ok(done(
            async {
                let storage = FilesystemStorage::new(PathBuf::from(directory));
                let root = storage.root_of(&id).to_string_lossy().into_owned();
                let lease = storage.open(&id, lock).await?;
                let mut outcome = materialize(Box::new(lease), options, load, cancel).await?;
                outcome.version = Some(root);
                Ok(outcome)
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

/// Materializes through the JS adapter lease the facade registered as `lease`.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn workspace_js_acquire(
    env: &Env,
    lease: u32,
    options: String,
    load: Option<String>,
    cancel: u32,
) -> Result<Object<'_>> {
    let lease = JsLease::new(lease)?;
    let cancel = cancellation(cancel);
    let run = async move {
        Ok(done(
            materialize(Box::new(lease), options, load, cancel).await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

/// Saves session `session` (`request`: `{include?, exclude, gitignore, retention}` JSON);
/// `revision_id` of the outcome is the published revision.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn workspace_save(env: &Env, session: u32, request: String, cancel: u32) -> Result<Object<'_>> {
    let cancel = cancellation(cancel);
    let run = async move {
        Ok(done(
            async {
                let session = lookup(&SESSIONS, session)?;
                let revision = session
                    .lock()
                    .await
                    .save_cancellable(parse_save(&request), &cancel)
                    .await?;
                Ok(WorkspaceOutcome {
                    revision_id: Some(revision.id),
                    ..Default::default()
                })
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

/// Removes the materialization and releases storage; the session is closed afterwards.
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn workspace_release(env: &Env, session: u32) -> Result<Object<'_>> {
    let run = async move {
        Ok(done(
            async {
                let session = lookup(&SESSIONS, session)?;
                let result = session.lock().await.release().await;
                // Closed only after release: a save still running holds the session mutex.
                SESSIONS
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .live
                    .retain(|_, s| !Arc::ptr_eq(s, &session));
                result.map(|()| WorkspaceOutcome::default())
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi]
pub fn live_workspace_sessions() -> u32 {
    SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .live
        .len() as u32
}

/// `workspaceStorageSegment(id)`: the one rule (`aml_workspace::paths`). An invalid id
/// throws the documented message, which lib/workspace/segment.js rethrows as a `TypeError`.
#[napi]
pub fn workspace_storage_segment(id: String) -> Result<String> {
    guard(|| {
        aml_workspace::paths::workspace_storage_segment(&id)
            .map_err(|message| Error::new(Status::InvalidArg, message))
    })
}

// ---- The filesystem store as a plain adapter (FilesystemWorkspaceStorage methods). ----

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
                let handle = insert(&FS_LEASES, lease);
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
    let bytes = body.to_vec();
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
                let Some(lease) = remove(&FS_LEASES, lease) else {
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

// ---- The local Workspace lock (BW-1). ----

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
                outcome.handle = Some(insert(&LOCKS, held));
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
pub fn local_workspace_lock_problem(lock: u32) -> Option<String> {
    let held = lookup(&LOCKS, lock).ok()?;
    held.check().err()
}

/// Releases lock `lock` of the Workspace `directory` (named in the errors).
#[napi(ts_return_type = "Promise<WorkspaceOutcome>")]
pub fn local_workspace_release(env: &Env, lock: u32, directory: String) -> Result<Object<'_>> {
    let run = async move {
        let failed =
            |what: &str| WorkspaceError::error(format!("Local Workspace \"{directory}\" {what}"));
        let Some(held) = remove(&LOCKS, lock) else {
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
pub fn live_workspace_locks() -> u32 {
    LOCKS.lock().unwrap_or_else(|p| p.into_inner()).live.len() as u32
}
