//! Retention: `aml runs prune` removes old runs (docs/STUDIO.md "Retention").

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::list::list;
use crate::{io_error, run_dir, RunsError};

/// Which runs to keep: the newest `keep` runs, and of those only runs started at or after
/// `newer_than` (epoch ms). A run still `running` is never removed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retention {
    pub keep: Option<usize>,
    pub newer_than: Option<f64>,
}

/// Removes the runs `retention` does not keep; returns their ids. Only directories named by
/// a valid run id are removed, and a symlink is removed as a link, never followed.
pub fn prune(runs: &Path, retention: Retention) -> Result<Vec<String>, RunsError> {
    let mut removed = Vec::new();
    for (index, meta) in list(runs)?.iter().enumerate() {
        let Some(id) = meta.get("id").and_then(Value::as_str) else {
            continue;
        };
        if meta.get("status").and_then(Value::as_str) == Some("running") {
            continue;
        }
        let started = meta.get("startedAt").and_then(Value::as_f64).unwrap_or(0.0);
        let too_many = retention.keep.is_some_and(|keep| index >= keep);
        let too_old = retention.newer_than.is_some_and(|limit| started < limit);
        if !(too_many || too_old) {
            continue;
        }
        let dir = run_dir(runs, id)?;
        let kind = fs::symlink_metadata(&dir).map_err(|e| io_error(&dir, "read", e))?;
        let gone = if kind.is_dir() {
            fs::remove_dir_all(&dir)
        } else {
            fs::remove_file(&dir)
        };
        gone.map_err(|e| io_error(&dir, "removed", e))?;
        removed.push(id.to_string());
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::create_run;

    fn run(runs: &Path, id: &str, started: u32, status: &str) {
        create_run(
            runs,
            id,
            &format!(r#"{{"id":"{id}","startedAt":{started},"status":"{status}"}}"#),
        )
        .unwrap();
    }

    #[test]
    fn keeps_the_newest_and_never_a_running_run() {
        let runs = tempfile::tempdir().unwrap();
        run(runs.path(), "a", 1, "success");
        run(runs.path(), "b", 2, "running");
        run(runs.path(), "c", 3, "error");
        run(runs.path(), "d", 4, "success");
        let removed = prune(
            runs.path(),
            Retention {
                keep: Some(1),
                newer_than: None,
            },
        )
        .unwrap();
        assert_eq!(removed, ["c", "a"]);
        assert!(runs.path().join("b").exists() && runs.path().join("d").exists());
    }

    #[test]
    fn removes_runs_older_than_the_limit() {
        let runs = tempfile::tempdir().unwrap();
        run(runs.path(), "a", 1, "success");
        run(runs.path(), "b", 5, "success");
        assert_eq!(
            prune(
                runs.path(),
                Retention {
                    keep: None,
                    newer_than: Some(3.0)
                }
            )
            .unwrap(),
            ["a"]
        );
    }
}
