//! The per-process task that owns a tree from spawn to the last reap.
//!
//! Phases:
//! 1. **running** — wait for the leader's exit, a kill request (kill(), output limit, drop), the
//!    cancellation token or the timeout.
//! 2. **exited** — the leader is a zombie whose status `wait()` already reports. Leftover members
//!    (background jobs) keep running until a kill request: the zombie pins the group meanwhile.
//! 3. **teardown** — TERM, grace, KILL and reap (`Tree::teardown`), publishing the leader's
//!    status as soon as it is known.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::control::{Cause, Control, WaitResult};
use crate::error::ProcessError;
use crate::status::ExitStatus;
use crate::tree::Tree;

pub(crate) struct Monitor {
    pub(crate) tree: Tree,
    pub(crate) report: Report,
    pub(crate) gone_tx: watch::Sender<bool>,
    pub(crate) grace: Duration,
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancellationToken>,
}

/// What `wait()` will say, built up as the monitor learns it.
pub(crate) struct Report {
    pub(crate) control: Arc<Control>,
    pub(crate) exit_tx: watch::Sender<Option<WaitResult>>,
    /// Set when the leader could not be waited for (someone else reaped it).
    pub(crate) leader_error: Option<ProcessError>,
}

enum Running {
    Exited,
    KillRequested,
}

impl Monitor {
    pub(crate) async fn run(mut self) {
        if let Running::Exited = self.watch_running().await {
            self.publish_exit();
            self.await_kill_request().await;
        }
        let report = &self.report;
        self.tree
            .teardown(self.grace, |status, gone| report.publish(status, gone))
            .await;
        self.publish_exit();
        self.gone_tx.send_replace(true);
    }

    async fn watch_running(&mut self) -> Running {
        let control = Arc::clone(&self.report.control);
        let cancel = self.cancel.clone();
        let deadline = self.timeout.map(|timeout| Instant::now() + timeout);
        let exited = tokio::select! {
            biased;
            () = control.kill_requested().cancelled() => return Running::KillRequested,
            () = cancelled(cancel.as_ref()) => {
                control.request_kill(Cause::Cancelled);
                return Running::KillRequested;
            }
            () = sleep_until(deadline) => {
                let timeout = self.timeout.unwrap_or_default();
                control.request_kill(Cause::Timeout(timeout));
                return Running::KillRequested;
            }
            exited = self.tree.exited() => exited,
        };
        self.leader_exited(exited)
    }

    fn leader_exited(&mut self, exited: io::Result<ExitStatus>) -> Running {
        match exited {
            Ok(_) => Running::Exited,
            Err(error) => {
                // The leader is no longer ours to wait for: report it and clean up what is left.
                self.report.leader_error = Some(ProcessError::io("waiting for the process", error));
                Running::KillRequested
            }
        }
    }

    async fn await_kill_request(&self) {
        let control = &self.report.control;
        tokio::select! {
            () = control.kill_requested().cancelled() => {}
            () = cancelled(self.cancel.as_ref()) => control.request_kill(Cause::Cancelled),
        }
    }

    fn publish_exit(&self) {
        self.report
            .publish(self.tree.leader_status(), self.tree.is_gone());
    }
}

impl Report {
    /// Publishes `wait()`'s memoised result as soon as the leader's fate is known; later calls
    /// are no-ops, so the first observation (and the cause recorded before it) wins.
    fn publish(&self, status: Option<ExitStatus>, gone: bool) {
        if self.exit_tx.borrow().is_some() {
            return;
        }
        let result = match (status, &self.leader_error) {
            (Some(status), _) => Cause::wait_result(self.control.cause(), status),
            (None, Some(error)) => Err(error.clone()),
            (None, None) if gone => Err(ProcessError::io(
                "the process was reaped outside the supervisor",
                io::Error::from_raw_os_error(libc::ECHILD),
            )),
            (None, None) => return,
        };
        self.exit_tx.send_replace(Some(result));
    }
}

async fn cancelled(token: Option<&CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
