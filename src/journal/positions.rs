//! The evaluation journal (docs/JOURNAL.md): structural positions from the engine and the
//! file journal from `crates/aml-journal`. Conversions only.

use std::path::Path;

use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;

fn journal_error(err: aml_journal::JournalError) -> Error {
    Error::new(Status::GenericFailure, err.to_string())
}

/// Starts recording task origins: `domain` is a journaled evaluation.
#[napi]
pub fn journal_enable(domain: u32) -> Result<()> {
    guard(|| {
        let spare = registry::take_spare_positions();
        registry::with(domain, |d| {
            match spare {
                Some(spare) => d.enable_positions_reusing(spare),
                None => d.enable_positions(),
            }
            Ok(())
        })
    })
}

/// The `journal.step` point of a live callable-Tool call at `key` on its span `span_id`
/// (child of `parent`): what lets the studio re-run from it (docs/STUDIO.md); the recorder's
/// alone while the steps are private, as an Agent's.
#[napi]
pub fn journal_tool_step(domain: u32, span_id: String, parent: String, key: String) -> Result<()> {
    guard(|| {
        let span = crate::evaluation::spans::span_id(&span_id)?;
        let parent = crate::evaluation::spans::span_id(&parent)?;
        registry::with(domain, |d| {
            d.journal_span_point(span, Some(parent), "journal.step", &key, "tool");
            Ok(())
        })
    })
}

/// The key of the next callable-Tool call from the component on top of `task`.
#[napi]
pub fn journal_tool_key(domain: u32, task: u32) -> Result<String> {
    guard(|| registry::with(domain, |d| d.tool_key(task).map_err(engine_error)))
}

/// The slot of the entry of `kind` at `key` in journal index `index`, or -1.
#[napi]
pub fn journal_index_slot(index: u32, key: String, kind: String) -> Result<i64> {
    guard(|| {
        let Some(kind) = aml_journal::EntryKind::parse(&kind) else {
            return Ok(-1);
        };
        crate::journal::index::with(index, |journal| {
            Ok(journal.slot(&key, kind).map_or(-1, i64::from))
        })
    })
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

/// The digest (SHA-256 hex) of a callable Tool call: name, input schema JSON, input JSON.
#[napi]
pub fn journal_tool_digest(name: String, input_schema: String, input: String) -> Result<String> {
    guard(|| Ok(aml_journal::tool_digest(&name, &input_schema, &input)))
}
