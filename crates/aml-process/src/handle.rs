//! `spawn` and the handle it returns.

use std::io;
use std::sync::Arc;

use tokio::sync::watch;

use crate::control::{Cause, Control};
use crate::error::ProcessError;
use crate::launch::Launch;
use crate::local_tree::LocalTree;
use crate::monitor::{Monitor, Report};
use crate::options::SpawnOptions;
use crate::output::{Budget, OutputStream};
use crate::spawner::{self, Spawned, Started};
use crate::status::ExitStatus;
use crate::stdin::ProcessStdin;
use crate::tree::Tree;

/// A running (or finished) supervised process tree.
///
/// Dropping the handle tears the tree down in the background (SIGTERM, grace, SIGKILL, reap), so
/// an abandoned handle never leaks processes. Call [`kill`](Self::kill) to wait for that.
pub struct ProcessHandle {
    pid: u32,
    control: Arc<Control>,
    stdin: Option<ProcessStdin>,
    stdout: Option<OutputStream>,
    stderr: Option<OutputStream>,
}

/// Starts `command` with `args` as the leader of its own process group, with piped stdio.
///
/// Must be called from within a tokio runtime; the handle and its streams belong to that
/// runtime. Fails with `Cancelled` if `options.cancel` is already cancelled, and with `Spawn`
/// (carrying the OS error, e.g. `ENOENT`) if the process cannot be started.
pub async fn spawn(
    command: &str,
    args: &[String],
    options: SpawnOptions,
) -> Result<ProcessHandle, ProcessError> {
    if options
        .cancel
        .as_ref()
        .is_some_and(|token| token.is_cancelled())
    {
        return Err(ProcessError::Cancelled);
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        ProcessError::io(
            "spawn needs a tokio runtime",
            io::Error::other("no runtime"),
        )
    })?;
    let spawn_error = |source| ProcessError::Spawn {
        command: command.to_owned(),
        source: Arc::new(source),
    };
    // Built here, on the caller's thread: the spawner thread only creates the child.
    let launch = Launch::new(command, args, &options).map_err(spawn_error)?;
    let spawned = spawner::spawn(launch).await.map_err(spawn_error)?;
    let Spawned {
        tree,
        stdin,
        stdout,
        stderr,
    } = spawned;
    let tree = match tree {
        Started::Local(group, notifier) => Tree::Local(LocalTree::new(group, notifier)),
        Started::Remote(tree) => Tree::Remote(tree),
    };
    let pid = tree.leader() as u32;
    let (exit_tx, exit_rx) = watch::channel(None);
    let (gone_tx, gone_rx) = watch::channel(false);
    let control = Arc::new(Control::new(exit_rx, gone_rx));
    // Built before any fallible step below: if one fails, dropping the monitor drops the tree,
    // which hands it to the janitor (or asks the supervisor process to end it).
    let monitor = Monitor {
        tree,
        report: Report {
            control: Arc::clone(&control),
            exit_tx,
            leader_error: None,
        },
        gone_tx,
        grace: options.grace,
        timeout: options.timeout,
        cancel: options.cancel.clone(),
    };
    let budget = Arc::new(Budget::new(options.output_limit, Arc::clone(&control)));
    let pipes = |error| ProcessError::io("registering process pipes", error);
    let stdin = ProcessStdin::new(stdin).map_err(pipes)?;
    let stdout = OutputStream::new(stdout, Arc::clone(&budget)).map_err(pipes)?;
    let stderr = OutputStream::new(stderr, budget).map_err(pipes)?;
    runtime.spawn(monitor.run());
    Ok(ProcessHandle {
        pid,
        control,
        stdin: Some(stdin),
        stdout: Some(stdout),
        stderr: Some(stderr),
    })
}

impl ProcessHandle {
    /// The leader's pid, which is also the process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The portable identity of the contract: `"local-process:<pid>"`.
    pub fn id(&self) -> String {
        format!("local-process:{}", self.pid)
    }

    /// The child's stdin; `None` once taken.
    pub fn take_stdin(&mut self) -> Option<ProcessStdin> {
        self.stdin.take()
    }

    /// The child's stdout; `None` once taken.
    pub fn take_stdout(&mut self) -> Option<OutputStream> {
        self.stdout.take()
    }

    /// The child's stderr; `None` once taken.
    pub fn take_stderr(&mut self) -> Option<OutputStream> {
        self.stderr.take()
    }

    /// Terminates the whole group (SIGTERM, grace period, SIGKILL) and resolves once every
    /// member is dead and reaped. Idempotent: concurrent and repeated calls all wait for the
    /// same teardown, and a call after the tree is gone returns at once.
    pub async fn kill(&self) {
        self.control.request_kill(Cause::Requested);
        self.control.gone().await;
    }

    /// The leader's fate, memoised: every call returns the same value. `Ok` carries how it
    /// ended (an explicit `kill()` shows as `Signaled`); `Err` says the supervisor ended it
    /// (`Timeout`, `OutputLimitExceeded`, `Cancelled`). Resolves when the leader exits, which
    /// may be before the rest of its group is gone.
    pub async fn wait(&self) -> Result<ExitStatus, ProcessError> {
        self.control.wait().await
    }

    /// Resolves once the whole group is dead and reaped, without asking for it.
    pub(crate) async fn gone(&self) {
        self.control.gone().await;
    }
}

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        self.control.request_kill(Cause::Abandoned);
    }
}
