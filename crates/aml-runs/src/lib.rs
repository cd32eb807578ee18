//! The run store behind `aml run`'s recording and `aml studio` (docs/STUDIO.md).
//!
//! Layout, one directory per run beneath the runs directory:
//!
//! ```text
//! <runs>/<runId>/run.json       the run's metadata (replaced atomically as it changes)
//! <runs>/<runId>/events.jsonl   trace records, one JSON array per line, appended
//! <runs>/<runId>/journal        the run's journal (aml-journal's file format), at the end
//! <runs>/<runId>/reruns/        scratch of re-runs started from this run
//! ```
//!
//! Every path is derived from a validated run id (`confine.rs`), so nothing outside the runs
//! directory is ever read, written or removed through this crate.

mod compact;
mod confine;
mod handover;
mod list;
mod prune;
mod read;
mod record;
mod recorder;

pub use confine::{run_dir, valid_run_id};
pub use list::{list, read_meta};
pub use prune::{prune, Retention};
pub use read::{read_events, EventsChunk};
pub use record::{append_events, create_run, write_meta, Appended};
pub use recorder::{Recorder, RunJournal, RunTap, FLUSH_AFTER};

/// The default size cap of one run's events file (docs/STUDIO.md "Size cap").
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum RunsError {
    #[error("AML run id {0:?} is not a valid run id")]
    InvalidRunId(String),
    #[error("AML run {0:?} is not recorded")]
    NotFound(String),
    #[error("AML runs directory {path:?} could not be {action}: {message}")]
    Io {
        path: String,
        action: &'static str,
        message: String,
    },
}

pub(crate) fn io_error(
    path: &std::path::Path,
    action: &'static str,
    error: std::io::Error,
) -> RunsError {
    RunsError::Io {
        path: path.display().to_string(),
        action,
        message: error.to_string(),
    }
}
