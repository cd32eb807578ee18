//! Reading a run's events from an offset: the studio polls with the offset it got last, so a
//! live run's page receives only what was appended since (docs/STUDIO.md "Live runs").

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

use crate::confine::run_dir;
use crate::{io_error, RunsError};

/// Complete lines from an offset, and the offset to ask from next.
#[derive(Debug, PartialEq, Eq)]
pub struct EventsChunk {
    pub text: String,
    pub next: u64,
}

/// Up to `max` bytes of run `id`'s events from `offset`, cut after the last complete line
/// (a line being appended is left for the next read).
pub fn read_events(
    runs: &Path,
    id: &str,
    offset: u64,
    max: usize,
) -> Result<EventsChunk, RunsError> {
    let dir = run_dir(runs, id)?;
    if !dir.join("run.json").is_file() {
        return Err(RunsError::NotFound(id.to_string()));
    }
    let path = dir.join("events.jsonl");
    let mut file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Ok(EventsChunk {
                text: String::new(),
                next: 0,
            })
        }
        Err(e) => return Err(io_error(&path, "opened", e)),
    };
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| io_error(&path, "read", e))?;
    let mut bytes = Vec::new();
    file.take(max as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&path, "read", e))?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    let text = String::from_utf8(bytes).map_err(|e| {
        io_error(
            &path,
            "read",
            std::io::Error::new(ErrorKind::InvalidData, e),
        )
    })?;
    Ok(EventsChunk {
        next: offset + complete as u64,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{append_events, create_run};

    #[test]
    fn reads_whole_lines_from_an_offset() {
        let runs = tempfile::tempdir().unwrap();
        create_run(runs.path(), "r1", "{}").unwrap();
        append_events(runs.path(), "r1", "[1]\n[2]\n", 1 << 20).unwrap();
        let first = read_events(runs.path(), "r1", 0, 6).unwrap();
        assert_eq!(
            first,
            EventsChunk {
                text: "[1]\n".into(),
                next: 4
            }
        );
        let rest = read_events(runs.path(), "r1", first.next, 1 << 20).unwrap();
        assert_eq!(
            rest,
            EventsChunk {
                text: "[2]\n".into(),
                next: 8
            }
        );
    }

    #[test]
    fn an_unknown_run_is_not_found() {
        let runs = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_events(runs.path(), "nope", 0, 10),
            Err(RunsError::NotFound(_))
        ));
        assert!(matches!(
            read_events(runs.path(), "..", 0, 10),
            Err(RunsError::InvalidRunId(_))
        ));
    }
}
