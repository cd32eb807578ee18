//! Opening (with torn-tail repair) and durable appends.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use crate::{header, header_workflow, io_error, is_record, JournalError};

/// What reopening found.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    /// The complete records, oldest first, as the JSON text they were appended with.
    pub records: Vec<String>,
    /// Whether a torn last record was dropped.
    pub torn: bool,
}

fn sync_parent(path: &Path) -> Result<(), JournalError> {
    // A new file's directory entry must be durable too, or a crash can lose the whole file.
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| io_error(path, "created", e))
}

fn write_header(file: &mut File, path: &Path, workflow: &str) -> Result<(), JournalError> {
    let mut line = header(workflow);
    line.push('\n');
    file.set_len(0).map_err(|e| io_error(path, "written", e))?;
    file.write_all(line.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| io_error(path, "written", e))
}

/// Whether `bytes` (no newline in them) can be a header cut short by a crash.
fn is_torn_header(bytes: &[u8]) -> bool {
    const MAGIC: &[u8] = b"{\"amlJournal\":";
    if bytes.len() <= MAGIC.len() {
        MAGIC.starts_with(bytes)
    } else {
        bytes.starts_with(MAGIC)
    }
}

/// Opens (creating it when missing) the journal at `path` for `workflow`.
///
/// A file whose header never completed (a crash during creation) is started over; a file of
/// another workflow is refused.
pub fn open(path: &Path, workflow: &str) -> Result<Opened, JournalError> {
    if workflow.is_empty() {
        return Err(JournalError::InvalidWorkflow);
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| io_error(path, "opened", e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "read", e))?;
    let shown = || path.display().to_string();
    let Some(header_end) = bytes.iter().position(|&b| b == b'\n') else {
        // Empty, or only a torn header: nothing was ever recorded.
        if !is_torn_header(&bytes) {
            return Err(JournalError::NotAJournal(shown()));
        }
        write_header(&mut file, path, workflow)?;
        sync_parent(path)?;
        return Ok(Opened {
            records: Vec::new(),
            torn: false,
        });
    };
    let header_line = std::str::from_utf8(&bytes[..header_end])
        .map_err(|_| JournalError::NotAJournal(shown()))?;
    let found = header_workflow(header_line).ok_or_else(|| JournalError::NotAJournal(shown()))?;
    if found != workflow {
        return Err(JournalError::OtherWorkflow {
            path: shown(),
            found,
            expected: workflow.to_string(),
        });
    }
    let mut records = Vec::new();
    let mut start = header_end + 1;
    let mut line = 1;
    while let Some(offset) = bytes[start..].iter().position(|&b| b == b'\n') {
        line += 1;
        let end = start + offset;
        let text = std::str::from_utf8(&bytes[start..end])
            .ok()
            .filter(|text| is_record(text))
            .ok_or(JournalError::Corrupt {
                path: shown(),
                line,
            })?;
        records.push(text.to_string());
        start = end + 1;
    }
    let torn = start < bytes.len();
    if torn {
        // Only the last write can be incomplete: drop it so the next append starts clean.
        file.set_len(start as u64)
            .and_then(|()| file.sync_data())
            .map_err(|e| io_error(path, "repaired", e))?;
    }
    Ok(Opened { records, torn })
}

/// Appends one record durably: a single write of the line, then `fdatasync`.
pub fn append(path: &Path, record: &str) -> Result<(), JournalError> {
    if !is_record(record) {
        return Err(JournalError::InvalidRecord);
    }
    let mut line = String::with_capacity(record.len() + 1);
    line.push_str(record);
    line.push('\n');
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| io_error(path, "opened", e))?;
    file.write_all(line.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| io_error(path, "written", e))
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
