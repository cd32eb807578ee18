//! Workspace persistence entry points: sessions of `aml_workspace::Materialization` keyed by
//! small integers (materialize through the filesystem store or a JS adapter, save, release),
//! their cancellations, and `workspaceStorageSegment`. The filesystem store used as a plain
//! adapter is [`super::fs_store`], the local Workspace lock [`super::local_lock`].
//! Conversions only: the work is in `crates/aml-workspace`.

use std::path::PathBuf;

use aml_workspace::{
    Cancel, FilesystemStorage, Format, LoadRequest, Materialization, PersistenceOptions,
    SaveRequest, StorageLease, WorkspaceError,
};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::Value;

use super::outcome::{done, lookup, WorkspaceOutcome};
use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;
use crate::workspace::js_storage::JsLease;

type Session = tokio::sync::Mutex<Materialization>;
static SESSIONS: Handles<Session> = Handles::new();
static CANCELS: Handles<Cancel> = Handles::new();

/// A cancellation for one restore or save; the facade fires it from the abort signal.
#[napi]
pub fn workspace_cancellation() -> Result<u32> {
    guard(|| Ok(CANCELS.insert(Cancel::new())))
}

/// Fires cancellation `handle` (the running restore or save stops at its next file).
#[napi]
pub fn workspace_cancel(handle: u32) -> Result<()> {
    guard(|| {
        if let Ok(cancel) = lookup(&CANCELS, handle) {
            cancel.cancel();
        };
        Ok(())
    })
}

/// Forgets cancellation `handle` once its call settled.
#[napi]
pub fn workspace_cancellation_done(handle: u32) -> Result<()> {
    guard(|| {
        CANCELS.remove(handle);
        Ok(())
    })
}

/// The cancellation registered as `handle` (0: none).
fn cancellation(handle: u32) -> Cancel {
    lookup(&CANCELS, handle)
        .map(|cancel| (*cancel).clone())
        .unwrap_or_default()
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
    options.workspace_id = value["workspaceId"].as_str().map(str::to_owned);
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
    let handle = SESSIONS.insert(tokio::sync::Mutex::new(materialization));
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
    let cancel = guard(|| Ok(cancellation(cancel)))?;
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
    let lease = guard(|| JsLease::new(lease))?;
    let cancel = guard(|| Ok(cancellation(cancel)))?;
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
    let cancel = guard(|| Ok(cancellation(cancel)))?;
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
                let handle = session;
                let session = lookup(&SESSIONS, handle)?;
                let result = session.lock().await.release().await;
                // Closed only after release: a save still running holds the session mutex.
                SESSIONS.remove(handle);
                result.map(|()| WorkspaceOutcome::default())
            }
            .await,
        ))
    };
    spawn_promise(env, run, |_, outcome| Ok(outcome))
}

#[napi]
pub fn live_workspace_sessions() -> Result<u32> {
    guard(|| Ok(SESSIONS.len() as u32))
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
