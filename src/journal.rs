//! The evaluation journal (docs/JOURNAL.md): structural positions from the engine and the
//! file journal from `crates/aml-journal`. Conversions only.

use std::path::Path;

use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::guard::{engine_error, guard};
use crate::registry;

fn journal_error(err: aml_journal::JournalError) -> Error {
    Error::new(Status::GenericFailure, err.to_string())
}

/// The structural position of `task`'s top frame (only journaled evaluations ask).
#[napi]
pub fn journal_position(domain: u32, task: u32) -> Result<String> {
    guard(|| registry::with(domain, |d| d.position(task).map_err(engine_error)))
}

/// Marks the ready Agent on top of `task` as replayed (its span gets `journal.replayed`).
#[napi]
pub fn journal_mark_replayed(domain: u32, task: u32) -> Result<()> {
    guard(|| registry::with(domain, |d| d.mark_replayed(task).map_err(engine_error)))
}

#[napi(object)]
pub struct JournalFileOpened {
    pub records: Vec<String>,
    pub torn: bool,
}

/// Opens or creates the journal file at `path` for `workflow`, repairing a torn tail.
#[napi]
pub fn journal_file_open(path: String, workflow: String) -> Result<JournalFileOpened> {
    guard(|| {
        let opened = aml_journal::open(Path::new(&path), &workflow).map_err(journal_error)?;
        Ok(JournalFileOpened {
            records: opened.records,
            torn: opened.torn,
        })
    })
}

/// Appends one record (one line of JSON) and waits for `fdatasync`.
#[napi]
pub fn journal_file_append(path: String, record: String) -> Result<()> {
    guard(|| aml_journal::append(Path::new(&path), &record).map_err(journal_error))
}

/// SHA-256 (hex) of a canonical request text built by lib/journal-digest.js.
#[napi]
pub fn journal_digest(text: String) -> Result<String> {
    guard(|| Ok(aml_journal::digest(&text)))
}
