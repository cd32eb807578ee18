//! "Re-run from here" (docs/STUDIO.md): a copy of the run's journal, cut before the chosen
//! step by `aml run --from`, and a new `aml run` linked to the old run.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::watch;

/// How long a stopped studio's re-run has to end after SIGTERM before it is killed: what
/// `aml run` needs to cancel its evaluation, clean up and record the run.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The re-runs a studio started. They stop with it: each gets SIGTERM, as from Ctrl-C in a
/// terminal (`aml run` cancels its evaluation, cleans up and records the run as failed), and
/// the studio is closed only once they ended (`Studio::closed`).
pub(crate) struct Reruns {
    stopping: watch::Receiver<bool>,
    running: watch::Sender<usize>,
}

impl Reruns {
    pub(crate) fn new(stopping: watch::Receiver<bool>) -> Reruns {
        Reruns {
            stopping,
            running: watch::Sender::new(0),
        }
    }

    /// How many re-runs are running, as a receiver to wait on.
    pub(crate) fn running(&self) -> watch::Receiver<usize> {
        self.running.subscribe()
    }
}

/// Waits for `child`; once the studio stops, stops it (see [`Reruns`]).
async fn watch_child(mut child: tokio::process::Child, mut stopping: watch::Receiver<bool>) {
    let stop = async move {
        // A dropped sender is a stopped studio too.
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    tokio::select! {
        _ = child.wait() => return,
        () = stop => {}
    }
    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
        // SAFETY: kill takes no pointers; `pid` is this child's, not yet reaped (wait above
        // has not returned), so the id cannot name another process.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// How to start `aml run`: a program and the arguments before `run` (the CLI passes Node and
/// its own `bin/aml.js`, so a re-run uses the same installation as the studio).
#[derive(Debug, Clone)]
pub struct RerunCommand {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}

/// Starts a re-run of run `id` (metadata `meta`) from journal step `step`; returns the
/// child's pid. The child is reaped by a task of its own, and stopped with the studio
/// ([`Reruns`]); its output goes to a log file next to the journal copy.
pub(crate) fn start(
    command: &RerunCommand,
    reruns: &Reruns,
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
    let child = child.spawn().map_err(|e| e.to_string())?;
    let pid = child.id().unwrap_or(0);
    let running = reruns.running.clone();
    running.send_modify(|n| *n += 1);
    let stopping = reruns.stopping.clone();
    tokio::spawn(async move {
        watch_child(child, stopping).await;
        running.send_modify(|n| *n -= 1);
    });
    Ok(pid)
}
