//! Errors as data. Every variant is `Clone` (io errors are shared behind `Arc`) because one
//! memoised `wait()` result is handed to every caller.

use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Why a supervised process could not be started, read, written or waited for.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProcessError {
    /// The process could not be started: command not found (`ENOENT`), not executable
    /// (`EACCES`), a missing `cwd`, a NUL byte in an argument, ...
    #[error("failed to spawn `{command}`: {source}")]
    Spawn {
        /// The command as given to `spawn`.
        command: String,
        /// What the OS reported.
        #[source]
        source: Arc<io::Error>,
    },
    /// The cancellation token fired (before the spawn, or while the process ran); the tree was
    /// killed.
    #[error("process was cancelled")]
    Cancelled,
    /// The process outlived `SpawnOptions::timeout`; the tree was killed.
    #[error("process timed out after {} ms", timeout.as_millis())]
    Timeout {
        /// The configured timeout.
        timeout: Duration,
    },
    /// stdout and stderr together produced more than `limit` bytes; the tree was killed.
    #[error("process output exceeded {limit} bytes")]
    OutputLimitExceeded {
        /// The shared stdout+stderr budget.
        limit: usize,
    },
    /// stdin was already closed when a write was attempted.
    #[error("process stdin is closed")]
    StdinClosed,
    /// The supervisor stopped before it could report (its tokio runtime shut down). The process
    /// tree is still killed and reaped, by a background thread.
    #[error("process supervisor stopped before the process finished")]
    SupervisorStopped,
    /// An OS call on a pipe or on the process failed.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: &'static str,
        /// What the OS reported.
        #[source]
        source: Arc<io::Error>,
    },
}

impl ProcessError {
    pub(crate) fn io(context: &'static str, source: io::Error) -> Self {
        ProcessError::Io {
            context,
            source: Arc::new(source),
        }
    }

    /// The underlying OS error, for `Spawn` and `Io` (e.g. to check for `ENOENT`).
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            ProcessError::Spawn { source, .. } | ProcessError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
