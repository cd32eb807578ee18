//! Interrupting a restore or a save (evaluation cancellation). The engine checks the token
//! before every file it restores, archives or uploads, and before publication; an abort
//! stops there, removes what it made (the temporary root, an uploaded but unpublished
//! revision, staged files) and fails with an `ABORT_ERR` error, which the facade replaces by
//! the signal's reason. Work already handed to a store (a JS adapter call) finishes first,
//! so nothing runs on after the call returns.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::{Result, WorkspaceError};

/// What was interrupted, for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Restore,
    Save,
}

type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// A cancellation token plus, for tests, an observer of every file the engine is about to move.
#[derive(Clone, Default)]
pub struct Cancel {
    token: CancellationToken,
    observer: Option<Observer>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cancel({})", self.token.is_cancelled())
    }
}

impl Cancel {
    /// Never cancelled unless [`Cancel::cancel`] is called.
    pub fn new() -> Self {
        Cancel::default()
    }
    pub fn from_token(token: CancellationToken) -> Self {
        Cancel {
            token,
            observer: None,
        }
    }
    /// Calls `observer` with each file's path before it is restored or saved.
    pub fn with_observer(mut self, observer: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }
    pub fn cancel(&self) {
        self.token.cancel();
    }
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
    /// Fails with the abort error once cancelled.
    pub fn check(&self, phase: Phase) -> Result<()> {
        if self.token.is_cancelled() {
            Err(aborted(phase))
        } else {
            Ok(())
        }
    }
    /// [`Cancel::check`] before moving the file `path`.
    pub fn entry(&self, phase: Phase, path: &str) -> Result<()> {
        if let Some(observer) = &self.observer {
            observer(path);
        }
        self.check(phase)
    }
}

/// `Error("Workspace restore was aborted" | "Workspace save was aborted")`, code `ABORT_ERR`.
pub fn aborted(phase: Phase) -> WorkspaceError {
    let what = match phase {
        Phase::Restore => "restore",
        Phase::Save => "save",
    };
    let mut error = WorkspaceError::error(format!("Workspace {what} was aborted"));
    error.code = Some("ABORT_ERR".into());
    error
}

/// Whether `error` is (or aggregates first) an abort.
pub fn is_aborted(error: &WorkspaceError) -> bool {
    error.code.as_deref() == Some("ABORT_ERR") || error.errors.first().is_some_and(is_aborted)
}
