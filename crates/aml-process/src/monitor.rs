//! The per-process task that owns a group from spawn to the last reap.
//!
//! Phases:
//! 1. **running** — wait for the leader's exit, a kill request (kill(), output limit, drop), the
//!    cancellation token or the timeout; sweep orphaned zombies now and then.
//! 2. **exited** — the leader is a zombie whose status `wait()` already reports. Leftover members
//!    (background jobs) keep running until a kill request: the zombie pins the group meanwhile.
//! 3. **teardown** — SIGTERM (+SIGCONT, so stopped members can act on it) to the group, reap until
//!    the group is empty or the grace period ends, then SIGKILL and reap until empty.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::control::{Cause, Control, WaitResult};
use crate::error::ProcessError;
use crate::exit_watch::LeaderExit;
use crate::group::{Drain, Group};

/// Upper bound of every polling backoff: how stale "is the group empty yet?" may get.
pub(crate) const MAX_POLL: Duration = Duration::from_millis(20);

/// How often a running tree is swept for exited orphans (a syscall per tree per period).
const ORPHAN_SWEEP: Duration = Duration::from_secs(1);

pub(crate) struct Monitor {
    pub(crate) group: Group,
    pub(crate) exit: LeaderExit,
    pub(crate) control: Arc<Control>,
    pub(crate) exit_tx: watch::Sender<Option<WaitResult>>,
    pub(crate) gone_tx: watch::Sender<bool>,
    pub(crate) grace: Duration,
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancellationToken>,
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
        self.teardown().await;
        self.publish_exit();
        self.gone_tx.send_replace(true);
    }

    async fn watch_running(&mut self) -> Running {
        let kill = self.control.kill_requested().clone();
        let cancel = self.cancel.clone();
        let deadline = self.timeout.map(|timeout| Instant::now() + timeout);
        let mut sweep = tokio::time::interval_at(Instant::now() + ORPHAN_SWEEP, ORPHAN_SWEEP);
        sweep.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let exited = tokio::select! {
                biased;
                () = kill.cancelled() => return Running::KillRequested,
                () = cancelled(cancel.as_ref()) => {
                    self.control.request_kill(Cause::Cancelled);
                    return Running::KillRequested;
                }
                () = sleep_until(deadline) => {
                    let timeout = self.timeout.unwrap_or_default();
                    self.control.request_kill(Cause::Timeout(timeout));
                    return Running::KillRequested;
                }
                exited = self.exit.exited() => exited,
                _ = sweep.tick() => {
                    self.group.reap_orphans();
                    continue;
                }
            };
            return self.leader_exited(exited);
        }
    }

    fn leader_exited(&mut self, exited: io::Result<crate::ExitStatus>) -> Running {
        match exited {
            Ok(status) => {
                self.group.note_leader_exit(status);
                Running::Exited
            }
            Err(error) => {
                // The leader is no longer ours to wait for: report it and clean up what is left.
                self.leader_error = Some(ProcessError::io("waiting for the process", error));
                Running::KillRequested
            }
        }
    }

    async fn await_kill_request(&self) {
        tokio::select! {
            () = self.control.kill_requested().cancelled() => {}
            () = cancelled(self.cancel.as_ref()) => self.control.request_kill(Cause::Cancelled),
        }
    }

    async fn teardown(&mut self) {
        // Reap first: an already-dead tree (the common case after a normal exit) needs no signal,
        // and a signal must follow a drain that proved the group still ours (PIN in group.rs).
        if self.group.drain() == Drain::Gone {
            return;
        }
        if !self.grace.is_zero() {
            let _ = self.group.signal(libc::SIGTERM);
            let _ = self.group.signal(libc::SIGCONT);
            if self.settle(Some(Instant::now() + self.grace)).await {
                return;
            }
        }
        let _ = self.group.signal(libc::SIGKILL);
        self.settle(None).await;
    }

    /// Reaps until the group is empty (`true`) or `deadline` passes (`false`). Returns `false`
    /// only right after a drain that found a live member, with no await in between, so the
    /// caller may signal the group.
    async fn settle(&mut self, deadline: Option<Instant>) -> bool {
        let mut delay = Duration::from_millis(1);
        loop {
            if self.group.drain() == Drain::Gone {
                return true;
            }
            self.publish_exit();
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return false;
            }
            let wake = now + delay;
            tokio::time::sleep_until(deadline.map_or(wake, |deadline| wake.min(deadline))).await;
            delay = (delay * 2).min(MAX_POLL);
        }
    }

    /// Publishes `wait()`'s memoised result as soon as the leader's fate is known; later calls
    /// are no-ops, so the first observation (and the cause recorded before it) wins.
    fn publish_exit(&self) {
        if self.exit_tx.borrow().is_some() {
            return;
        }
        let result = match (self.group.leader_status(), &self.leader_error) {
            (Some(status), _) => Cause::wait_result(self.control.cause(), status),
            (None, Some(error)) => Err(error.clone()),
            (None, None) if self.group.is_gone() => Err(ProcessError::io(
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
