//! The file behind `createFileJournal()` (docs/JOURNAL.md).
//!
//! Layout: one header line `{"amlJournal":1,"workflow":"<id>"}` and then one JSON line per
//! settled step, each written with a single `write` and made durable with `fdatasync` before
//! the workflow moves on. A record is only ever appended, never rewritten, so the only damage
//! a crash can leave is a *torn tail*: a last line without its newline. Reopening drops that
//! tail (truncating the file to the last complete record); any other unreadable line is
//! corruption and is reported, never skipped, because skipping it would silently re-run a
//! step that already had effects.

mod cut;
mod digest;
mod file;
mod index;

pub use cut::{cut_before, write_all, write_records, Cut, Durability};
pub use digest::{
    agent_digest, agent_digest_raw, digest, hex, parse_hex, tool_digest, AgentRequest, Raw,
};
pub use file::{append, open, Opened};
pub use index::{EntryKind, Found, Indexed, JournalIndex, Recorded, RecordedCopy};

use std::path::Path;

/// The header's format version.
pub const FORMAT: u64 = 1;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JournalError {
    #[error("AML journal \"{path}\" belongs to workflow \"{found}\", not \"{expected}\"")]
    OtherWorkflow {
        path: String,
        found: String,
        expected: String,
    },
    #[error("AML journal \"{0}\" is not an AML journal file")]
    NotAJournal(String),
    #[error("AML journal \"{path}\" has a corrupt record at line {line}")]
    Corrupt { path: String, line: usize },
    #[error("AML journal \"{path}\" has no step \"{key}\"")]
    NoStep { path: String, key: String },
    #[error("AML journal record must be one line of JSON")]
    InvalidRecord,
    #[error("AML journal workflow must be a non-empty string")]
    InvalidWorkflow,
    #[error("AML journal \"{path}\" could not be {action}: {message}")]
    Io {
        path: String,
        action: &'static str,
        message: String,
    },
}

pub(crate) fn io_error(path: &Path, action: &'static str, error: std::io::Error) -> JournalError {
    JournalError::Io {
        path: path.display().to_string(),
        action,
        message: error.to_string(),
    }
}

/// The header line (without its newline) for `workflow`.
pub fn header(workflow: &str) -> String {
    serde_json::json!({ "amlJournal": FORMAT, "workflow": workflow }).to_string()
}

/// The workflow named by a header line, or `None` when the line is not a journal header.
pub fn header_workflow(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    if value.get("amlJournal")?.as_u64()? != FORMAT {
        return None;
    }
    Some(value.get("workflow")?.as_str()?.to_string())
}

/// The record line of a plain-text Agent answer recorded natively (`JournalIndex::record_text`).
pub fn agent_text_record(key: &str, digest: &Raw, text: &str) -> String {
    // The facade's `JSON.stringify({ digest, key, kind: "agent", value: { text } })`, written
    // field by field: a recorded run's journal formats thousands of these (building a JSON
    // value per record cost its writer several times more).
    let mut line = String::with_capacity(key.len() + text.len() + 128);
    line.push_str(r#"{"digest":""#);
    line.push_str(&hex(digest));
    line.push_str(r#"","key":"#);
    push_json_string(&mut line, key);
    line.push_str(r#","kind":"agent","value":{"text":"#);
    push_json_string(&mut line, text);
    line.push_str("}}");
    line
}

/// Appends `text` as a JSON string (serde_json's escaping).
fn push_json_string(line: &mut String, text: &str) {
    // Serializing a &str into a String cannot fail.
    line.push_str(&serde_json::to_string(text).unwrap_or_default());
}

/// Whether `record` is one complete line of JSON (what a record must be).
pub fn is_record(record: &str) -> bool {
    !record.contains('\n') && serde_json::from_str::<serde_json::Value>(record).is_ok()
}
