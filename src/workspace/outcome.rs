//! What every Workspace entry point resolves ([`WorkspaceOutcome`]; a failure is `error`, the
//! JSON of an `aml_workspace::WorkspaceError`, which lib/workspace/errors.js turns into the
//! documented JS error), and the small-integer handle tables behind sessions, leases and locks.

use crate::boundary::handles::Handles;
use std::sync::Arc;

use aml_workspace::WorkspaceError;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

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

pub(crate) fn done(
    result: std::result::Result<WorkspaceOutcome, WorkspaceError>,
) -> WorkspaceOutcome {
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

/// The object behind a Workspace handle, or the error a closed handle reports.
pub(crate) fn lookup<T>(
    table: &Handles<T>,
    id: u32,
) -> std::result::Result<Arc<T>, WorkspaceError> {
    table
        .get(id)
        .ok_or_else(|| WorkspaceError::error("AML workspace handle is closed"))
}
