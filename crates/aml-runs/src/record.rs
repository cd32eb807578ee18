//! Writing a run's record: its directory, its metadata, its events with the size cap.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::confine::run_dir;
use crate::{io_error, RunsError};

/// Creates the directory of run `id` (and the runs directory) and writes its first metadata.
pub fn create_run(runs: &Path, id: &str, meta: &str) -> Result<(), RunsError> {
    let dir = run_dir(runs, id)?;
    fs::create_dir_all(&dir).map_err(|e| io_error(&dir, "created", e))?;
    write_meta(runs, id, meta)
}

/// Replaces `run.json` of run `id` atomically (a reader never sees half a file).
pub fn write_meta(runs: &Path, id: &str, meta: &str) -> Result<(), RunsError> {
    let dir = run_dir(runs, id)?;
    let path = dir.join("run.json");
    let temporary = dir.join(".run.json.tmp");
    File::create(&temporary)
        .and_then(|mut file| file.write_all(meta.as_bytes()))
        .and_then(|()| fs::rename(&temporary, &path))
        .map_err(|e| io_error(&path, "written", e))
}

/// Whether an append landed, or was refused because the events file reached its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    Written,
    /// The chunk would take the file past `max_bytes`: nothing was written (a chunk is whole
    /// lines, so the file stays a sequence of complete records).
    Capped,
}

/// Appends `chunk` (complete JSON lines) to run `id`'s events, unless that passes `max_bytes`.
/// Not fsync'd: the record is diagnostics, and a crash losing its tail loses no work.
pub fn append_events(
    runs: &Path,
    id: &str,
    chunk: &str,
    max_bytes: u64,
) -> Result<Appended, RunsError> {
    let path = run_dir(runs, id)?.join("events.jsonl");
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| io_error(&path, "opened", e))?;
    let size = file
        .metadata()
        .map_err(|e| io_error(&path, "read", e))?
        .len();
    if size + chunk.len() as u64 > max_bytes {
        return Ok(Appended::Capped);
    }
    file.write_all(chunk.as_bytes())
        .map_err(|e| io_error(&path, "written", e))?;
    Ok(Appended::Written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stop_at_the_cap_with_whole_lines() {
        let runs = tempfile::tempdir().unwrap();
        create_run(runs.path(), "r1", "{}").unwrap();
        let line = "[0,\"span-1\"]\n";
        let cap = (line.len() * 2) as u64;
        assert_eq!(
            append_events(runs.path(), "r1", line, cap).unwrap(),
            Appended::Written
        );
        assert_eq!(
            append_events(runs.path(), "r1", line, cap).unwrap(),
            Appended::Written
        );
        assert_eq!(
            append_events(runs.path(), "r1", line, cap).unwrap(),
            Appended::Capped
        );
        let text = fs::read_to_string(runs.path().join("r1/events.jsonl")).unwrap();
        assert_eq!(text, line.repeat(2));
    }

    #[test]
    fn metadata_is_replaced_whole() {
        let runs = tempfile::tempdir().unwrap();
        create_run(runs.path(), "r1", r#"{"status":"running"}"#).unwrap();
        write_meta(runs.path(), "r1", r#"{"status":"success"}"#).unwrap();
        let text = fs::read_to_string(runs.path().join("r1/run.json")).unwrap();
        assert_eq!(text, r#"{"status":"success"}"#);
        assert!(!runs.path().join("r1/.run.json.tmp").exists());
    }

    #[test]
    fn a_bad_id_writes_nothing() {
        let runs = tempfile::tempdir().unwrap();
        assert!(create_run(runs.path(), "../escape", "{}").is_err());
        assert!(!runs.path().parent().unwrap().join("escape").exists());
    }
}
