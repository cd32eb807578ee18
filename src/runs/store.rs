//! The run store and the journal cut, as synchronous calls (small local files).

use std::path::Path;

use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::boundary::guard::guard;

fn failure(error: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, error.to_string())
}

/// Creates run `id`'s directory beneath `runs` with its first metadata (JSON text).
#[napi]
pub fn runs_create(runs: String, id: String, meta: String) -> Result<()> {
    guard(|| aml_runs::create_run(Path::new(&runs), &id, &meta).map_err(failure))
}

/// Replaces run `id`'s metadata.
#[napi]
pub fn runs_write_meta(runs: String, id: String, meta: String) -> Result<()> {
    guard(|| aml_runs::write_meta(Path::new(&runs), &id, &meta).map_err(failure))
}

/// Appends complete JSON lines to run `id`'s events; false when the cap refused them.
#[napi]
pub fn runs_append(runs: String, id: String, chunk: String, max_bytes: f64) -> Result<bool> {
    guard(|| {
        // A JS number; the cap is a byte count well inside f64's exact integers.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let max = max_bytes as u64;
        aml_runs::append_events(Path::new(&runs), &id, &chunk, max)
            .map(|appended| appended == aml_runs::Appended::Written)
            .map_err(failure)
    })
}

/// Every recorded run's metadata as a JSON array, newest first.
#[napi]
pub fn runs_list(runs: String) -> Result<String> {
    guard(|| {
        let list = aml_runs::list(Path::new(&runs)).map_err(failure)?;
        Ok(serde_json::Value::Array(list).to_string())
    })
}

/// Removes the runs the retention does not keep (`keep` newest; started at or after
/// `newer_than` epoch ms); returns the removed ids.
#[napi]
pub fn runs_prune(runs: String, keep: Option<u32>, newer_than: Option<f64>) -> Result<Vec<String>> {
    guard(|| {
        let retention = aml_runs::Retention {
            keep: keep.map(|k| k as usize),
            newer_than,
        };
        aml_runs::prune(Path::new(&runs), retention).map_err(failure)
    })
}

/// Cuts the journal at `path` just before step `key`: `[kept, dropped]` record counts.
#[napi]
pub fn journal_file_cut(path: String, workflow: String, key: String) -> Result<Vec<u32>> {
    guard(|| {
        let cut = aml_journal::cut_before(Path::new(&path), &workflow, &key).map_err(failure)?;
        // Record counts of one file fit u32 (a journal of 4 billion steps is not a file).
        #[allow(clippy::cast_possible_truncation)]
        Ok(vec![cut.kept as u32, cut.dropped as u32])
    })
}
