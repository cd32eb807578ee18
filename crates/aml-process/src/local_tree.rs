//! A tree whose leader is a child of THIS process: the group logic of `group.rs` driven by the
//! leader's exit notifier, the orphan sweep and the TERM/grace/KILL teardown.
//!
//! The host runs it when it supervises its own trees; the supervisor process runs it for
//! every tree it starts on the host's behalf (`supervisor/server.rs`).

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use libc::pid_t;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::exit_watch::LeaderExit;
use crate::group::{Drain, Group};
use crate::poll;
use crate::status::ExitStatus;
use crate::sys;

mod without_subreaper;

/// How often a running tree is swept for exited orphans (a syscall per tree per period).
const ORPHAN_SWEEP: Duration = Duration::from_secs(1);

pub(crate) struct LocalTree {
    group: Group,
    exit: LeaderExit,
    sweep: Interval,
}

impl LocalTree {
    /// `group`'s leader is an unreaped child of ours; `notifier` is its exit notifier
    /// (`sys::exit_notifier`) where the platform has one.
    /// Must be called inside a tokio runtime (the notifier and the sweep timer belong to it).
    pub(crate) fn new(group: Group, notifier: Option<OwnedFd>) -> Self {
        let mut sweep = tokio::time::interval_at(Instant::now() + ORPHAN_SWEEP, ORPHAN_SWEEP);
        sweep.set_missed_tick_behavior(MissedTickBehavior::Delay);
        LocalTree {
            exit: LeaderExit::new(group.leader(), notifier),
            group,
            sweep,
        }
    }

    pub(crate) fn leader(&self) -> pid_t {
        self.group.leader()
    }

    pub(crate) fn leader_status(&self) -> Option<ExitStatus> {
        self.group.leader_status()
    }

    pub(crate) fn is_gone(&self) -> bool {
        self.group.is_gone()
    }

    /// Resolves with the leader's status once it exited (it stays a zombie, pinning the group),
    /// sweeping orphaned zombies meanwhile. Cancel-safe, for a `select!` loop.
    pub(crate) async fn exited(&mut self) -> io::Result<ExitStatus> {
        loop {
            tokio::select! {
                exited = self.exit.exited() => {
                    let status = exited?;
                    self.group.note_leader_exit(status);
                    return Ok(status);
                }
                _ = self.sweep.tick() => self.group.reap_orphans(),
            }
        }
    }

    /// SIGTERM (+SIGCONT, so stopped members can act on it), reap until the group is empty or
    /// `grace` ends, then SIGKILL and reap until empty. `progress` runs after every reaping
    /// round, so a caller can report the leader's status as soon as it is known.
    pub(crate) async fn teardown(&mut self, grace: Duration, mut progress: impl FnMut(&Self)) {
        if !sys::orphans_come_back() {
            return self.teardown_without_subreaper(grace, &mut progress).await;
        }
        // Reap first: an already-dead tree (the common case after a normal exit) needs no signal,
        // and a signal must follow a drain that proved the group still ours (PIN in group.rs).
        if self.group.drain() == Drain::Gone {
            return;
        }
        if !grace.is_zero() {
            let _ = self.group.signal(libc::SIGTERM);
            let _ = self.group.signal(libc::SIGCONT);
            if self
                .settle(Some(Instant::now() + grace), &mut progress)
                .await
            {
                return;
            }
        }
        let _ = self.group.signal(libc::SIGKILL);
        self.settle(None, &mut progress).await;
    }

    /// Reaps until the group is empty (`true`) or `deadline` passes (`false`). Returns `false`
    /// only right after a drain that found a live member, with no await in between, so the
    /// caller may signal the group.
    async fn settle(
        &mut self,
        deadline: Option<Instant>,
        progress: &mut impl FnMut(&Self),
    ) -> bool {
        let mut delay = poll::FIRST_POLL;
        loop {
            if self.group.drain() == Drain::Gone {
                return true;
            }
            progress(self);
            if !poll::pause(deadline, &mut delay).await {
                return false;
            }
        }
    }
}
