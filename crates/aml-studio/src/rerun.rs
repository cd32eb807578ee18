//! "Re-run from here" (docs/STUDIO.md): a copy of the run's journal, cut before the chosen
//! step by `aml run --from`, and a new `aml run` linked to the old run.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// How to start `aml run`: a program and the arguments before `run` (the CLI passes Node and
/// its own `bin/aml.js`, so a re-run uses the same installation as the studio).
#[derive(Debug, Clone)]
pub struct RerunCommand {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}

/// Starts a re-run of run `id` (metadata `meta`) from journal step `step`; returns the
/// child's pid. The child is reaped by a task of its own; its output goes to a log file next
/// to the journal copy.
pub(crate) fn start(
    command: &RerunCommand,
    runs: &Path,
    id: &str,
    meta: &Value,
    step: &str,
) -> Result<u32, String> {
    let text = |name: &str| meta.get(name).and_then(Value::as_str).map(str::to_string);
    let workflow = text("workflow").ok_or("the run has no workflow file")?;
    let cwd = text("cwd").ok_or("the run has no working directory")?;
    let dir = aml_runs::run_dir(runs, id).map_err(|e| e.to_string())?;
    let journal = dir.join("journal");
    if !journal.is_file() {
        return Err("the run has no journal".into());
    }
    let scratch = dir.join("reruns");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let copy = scratch.join(format!("{stamp}.journal"));
    std::fs::copy(&journal, &copy).map_err(|e| e.to_string())?;
    let log =
        std::fs::File::create(scratch.join(format!("{stamp}.log"))).map_err(|e| e.to_string())?;
    let mut child = tokio::process::Command::new(&command.program);
    child.args(&command.prefix).arg("run").arg(&workflow);
    if let Some(entry) = text("entry") {
        child.arg("--entry").arg(entry);
    }
    child
        .arg("--journal")
        .arg(&copy)
        .arg("--from")
        .arg(step)
        .arg("--runs-dir")
        .arg(runs)
        .arg("--rerun-of")
        .arg(id)
        .arg("--quiet")
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    let mut child = child.spawn().map_err(|e| e.to_string())?;
    let pid = child.id().unwrap_or(0);
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(pid)
}
