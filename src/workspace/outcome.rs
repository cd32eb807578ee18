//! What every Workspace entry point resolves ([`WorkspaceOutcome`]; a failure is `error`, the
//! JSON of an `aml_workspace::WorkspaceError`, which lib/workspace/errors.js turns into the
//! documented JS error), and the small-integer handle tables behind sessions, leases and locks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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

pub(crate) struct Table<T> {
    pub(crate) live: HashMap<u32, Arc<T>>,
    next: u32,
}

impl<T> Table<T> {
    pub(crate) fn new() -> Self {
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

pub(crate) fn lookup<T>(
    table: &Mutex<Table<T>>,
    id: u32,
) -> std::result::Result<Arc<T>, WorkspaceError> {
    let table = table.lock().unwrap_or_else(|p| p.into_inner());
    table
        .live
        .get(&id)
        .cloned()
        .ok_or_else(|| WorkspaceError::error("AML workspace handle is closed"))
}

pub(crate) fn remove<T>(table: &Mutex<Table<T>>, id: u32) -> Option<Arc<T>> {
    table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .live
        .remove(&id)
}

pub(crate) fn insert<T>(table: &Mutex<Table<T>>, value: T) -> u32 {
    table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(value)
}
