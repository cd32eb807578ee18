//! Cutting a journal file before a step (`aml run --journal <file> --from <step>`,
//! docs/CLI.md) and writing a whole journal at once (a recorded run's copy, docs/STUDIO.md).
//!
//! Records are in the order their steps settled, so "before the step" is file order: the
//! chosen step's record and every record after it are dropped, and a rerun runs them again.
//! The file is replaced atomically (a sibling temporary file, fsync, rename), so a crash
//! leaves either the old journal or the cut one, never a mixture.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{header, io_error, open, JournalError};

/// What a cut kept and dropped (numbers of records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub kept: usize,
    pub dropped: usize,
}

/// The key of one record line, if it has one.
fn record_key(record: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(record).ok()?;
    Some(value.get("key")?.as_str()?.to_string())
}

/// Cuts the journal of `workflow` at `path` just before the first record of `key`.
/// Fails (changing nothing) when no record has that key.
pub fn cut_before(path: &Path, workflow: &str, key: &str) -> Result<Cut, JournalError> {
    let opened = open(path, workflow)?;
    let total = opened.records.len();
    let at = opened
        .records
        .iter()
        .position(|record| record_key(record).as_deref() == Some(key))
        .ok_or_else(|| JournalError::NoStep {
            path: path.display().to_string(),
            key: key.to_string(),
        })?;
    write_all(path, workflow, &opened.records[..at], Durability::Synced)?;
    Ok(Cut {
        kept: at,
        dropped: total - at,
    })
}

/// Whether a written journal must survive a crash of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync before the rename: the user's own `--journal` file.
    Synced,
    /// Only atomic for readers: a recorded run's copy, diagnostics like the rest of the
    /// run's record (docs/STUDIO.md), written without waiting for the disk.
    Unsynced,
}

/// Writes a complete journal of `workflow` (header and `records`) at `path`, replacing any
/// file there atomically.
pub fn write_all(
    path: &Path,
    workflow: &str,
    records: &[String],
    durability: Durability,
) -> Result<(), JournalError> {
    if !records.iter().all(|record| crate::is_record(record)) {
        return Err(JournalError::InvalidRecord);
    }
    write_records(path, workflow, records, durability)
}

/// [`write_all`] for `records` known to be record lines (the writer made them: a recorded
/// run's journal, crates/aml-runs), without parsing each one again.
pub fn write_records(
    path: &Path,
    workflow: &str,
    records: &[String],
    durability: Durability,
) -> Result<(), JournalError> {
    if workflow.is_empty() {
        return Err(JournalError::InvalidWorkflow);
    }
    let mut text = header(workflow);
    text.push('\n');
    for record in records {
        text.push_str(record);
        text.push('\n');
    }
    let temporary = sibling(path);
    let written = File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())
                .and_then(|()| match durability {
                    Durability::Synced => file.sync_all(),
                    Durability::Unsynced => Ok(()),
                })
        })
        .and_then(|()| fs::rename(&temporary, path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(io_error(path, "written", error));
    }
    Ok(())
}

fn sibling(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_native_answer_is_written_as_the_facade_writes_it() {
        let line = crate::agent_text_record("agent:c.", &[0xab; 32], "say \"hi\"\n");
        let digest = "ab".repeat(32);
        assert_eq!(
            line,
            format!(
                r#"{{"digest":"{digest}","key":"agent:c.","kind":"agent","value":{{"text":"say \"hi\"\n"}}}}"#
            )
        );
        assert!(crate::is_record(&line));
    }

    fn record(key: &str) -> String {
        format!(r#"{{"key":"{key}","digest":"d","kind":"agent","value":{{"text":"{key}"}}}}"#)
    }

    #[test]
    fn cutting_keeps_the_records_before_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal");
        let records = vec![record("a"), record("b"), record("c")];
        write_all(&path, "wf", &records, Durability::Synced).unwrap();
        let cut = cut_before(&path, "wf", "b").unwrap();
        assert_eq!(
            cut,
            Cut {
                kept: 1,
                dropped: 2
            }
        );
        assert_eq!(open(&path, "wf").unwrap().records, vec![record("a")]);
    }

    #[test]
    fn an_unknown_step_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal");
        write_all(&path, "wf", &[record("a")], Durability::Unsynced).unwrap();
        let error = cut_before(&path, "wf", "zzz").unwrap_err();
        assert!(error.to_string().contains("has no step \"zzz\""), "{error}");
        assert_eq!(open(&path, "wf").unwrap().records.len(), 1);
    }

    #[test]
    fn another_workflows_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal");
        write_all(&path, "wf", &[record("a")], Durability::Unsynced).unwrap();
        assert!(cut_before(&path, "other", "a").is_err());
    }
}
