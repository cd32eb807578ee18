//! Path confinement: a run is addressed only by its id, and an id is one plain path segment.
//! Ids come from URLs (the studio) and command lines, so anything that could name another
//! directory (`..`, separators, NUL, a leading dot) is refused before a path is built.

use std::path::{Path, PathBuf};

use crate::RunsError;

/// Whether `id` can name a run: 1–128 ASCII letters, digits, `-` and `_`, not starting with `-`.
/// (`aml run` ids are UUIDs; the rule is wider so tests and imports can choose their own.)
pub fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The directory of run `id` beneath `runs`.
pub fn run_dir(runs: &Path, id: &str) -> Result<PathBuf, RunsError> {
    if !valid_run_id(id) {
        return Err(RunsError::InvalidRunId(id.to_string()));
    }
    Ok(runs.join(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_leave_the_runs_directory_are_refused() {
        for id in [
            "", "..", ".", "a/b", "a\\b", "/etc", "a\0b", "-x", ".hidden", "a b",
        ] {
            assert!(!valid_run_id(id), "{id:?}");
            assert!(run_dir(Path::new("/runs"), id).is_err());
        }
        assert!(valid_run_id("3f2c9a8e-1b2c-4d5e-8f90-0123456789ab"));
        assert_eq!(
            run_dir(Path::new("/runs"), "r1").unwrap(),
            Path::new("/runs/r1")
        );
    }
}
