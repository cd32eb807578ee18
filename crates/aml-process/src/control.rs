//! State shared by a process handle, its output streams and its monitor task.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::ProcessError;
use crate::status::ExitStatus;

/// The memoised answer of `wait()`.
pub(crate) type WaitResult = Result<ExitStatus, ProcessError>;

/// Why the tree is being torn down. The first cause wins; it decides what `wait()` reports if it
/// was recorded before the leader's exit was observed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cause {
    /// `kill()`, or `exec` cleaning up after the leader exited.
    Requested,
    /// The handle was dropped.
    Abandoned,
    Cancelled,
    Timeout(Duration),
    OutputLimit(usize),
}

impl Cause {
    /// What `wait()` says about a leader that ended with `status` after this cause.
    pub(crate) fn wait_result(cause: Option<&Cause>, status: ExitStatus) -> WaitResult {
        match cause {
            Some(Cause::Cancelled) => Err(ProcessError::Cancelled),
            Some(Cause::Timeout(timeout)) => Err(ProcessError::Timeout { timeout: *timeout }),
            Some(Cause::OutputLimit(limit)) => {
                Err(ProcessError::OutputLimitExceeded { limit: *limit })
            }
            Some(Cause::Requested | Cause::Abandoned) | None => Ok(status),
        }
    }
}

pub(crate) struct Control {
    cause: OnceLock<Cause>,
    kill: CancellationToken,
    /// `Some` once the leader's fate is known. The sender lives in the monitor task, so a closed
    /// channel means the monitor is gone.
    exit: watch::Receiver<Option<WaitResult>>,
    /// `true` once the whole group is dead and reaped.
    gone: watch::Receiver<bool>,
}

impl Control {
    pub(crate) fn new(
        exit: watch::Receiver<Option<WaitResult>>,
        gone: watch::Receiver<bool>,
    ) -> Self {
        Control {
            cause: OnceLock::new(),
            kill: CancellationToken::new(),
            exit,
            gone,
        }
    }

    /// Records `cause` (unless one was recorded first) and wakes the monitor to tear down.
    /// Synchronous, so output readers can call it from the middle of a read.
    pub(crate) fn request_kill(&self, cause: Cause) {
        let _ = self.cause.set(cause);
        self.kill.cancel();
    }

    pub(crate) fn cause(&self) -> Option<&Cause> {
        self.cause.get()
    }

    pub(crate) fn kill_requested(&self) -> &CancellationToken {
        &self.kill
    }

    pub(crate) async fn wait(&self) -> WaitResult {
        let mut exit = self.exit.clone();
        let result = match exit.wait_for(Option::is_some).await {
            Ok(result) => result.clone(),
            Err(_) => None,
        };
        result.unwrap_or(Err(ProcessError::SupervisorStopped))
    }

    /// Resolves once the group is dead and reaped, or once the monitor is gone (the janitor then
    /// owns the tree).
    pub(crate) async fn gone(&self) {
        let mut gone = self.gone.clone();
        let _ = gone.wait_for(|gone| *gone).await;
    }
}
