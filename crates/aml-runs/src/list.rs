//! The run list: every run directory's metadata, newest first.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::confine::{run_dir, valid_run_id};
use crate::{io_error, RunsError};

/// Run `id`'s metadata (`run.json`) as JSON.
pub fn read_meta(runs: &Path, id: &str) -> Result<Value, RunsError> {
    let path = run_dir(runs, id)?.join("run.json");
    let text = fs::read_to_string(&path).map_err(|_| RunsError::NotFound(id.to_string()))?;
    serde_json::from_str(&text).map_err(|_| RunsError::NotFound(id.to_string()))
}

/// Every recorded run's metadata, newest `startedAt` first. A missing runs directory is an
/// empty list; directories that are not runs (no readable `run.json`, or a symlink) are skipped.
pub fn list(runs: &Path) -> Result<Vec<Value>, RunsError> {
    let entries = match fs::read_dir(runs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(runs, "read", e)),
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let Some(id) = name.to_str() else { continue };
        if !kind.is_dir() || !valid_run_id(id) {
            continue;
        }
        if let Ok(meta) = read_meta(runs, id) {
            found.push(meta);
        }
    }
    found.sort_by(|a, b| started(b).total_cmp(&started(a)));
    Ok(found)
}

fn started(meta: &Value) -> f64 {
    meta.get("startedAt").and_then(Value::as_f64).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::create_run;

    #[test]
    fn lists_runs_newest_first_and_skips_strangers() {
        let runs = tempfile::tempdir().unwrap();
        create_run(runs.path(), "old", r#"{"id":"old","startedAt":1}"#).unwrap();
        create_run(runs.path(), "new", r#"{"id":"new","startedAt":2}"#).unwrap();
        fs::create_dir(runs.path().join("not-a-run")).unwrap();
        fs::write(runs.path().join("file"), "x").unwrap();
        let ids: Vec<_> = list(runs.path())
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, ["new", "old"]);
        assert!(list(&runs.path().join("missing")).unwrap().is_empty());
    }
}
