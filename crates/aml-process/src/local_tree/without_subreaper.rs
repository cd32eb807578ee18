//! The teardown of a tree whose orphans do not come back to us: this process could not become a
//! child subreaper (qemu-user answers EINVAL, some seccomp policies refuse it) or the platform
//! has none (macOS, BSDs).
//!
//! Then only the leader is our child: a member whose parent dies is reparented to PID 1 (or the
//! nearest other subreaper), and `waitpid(-G)` no longer sees it. What still holds:
//! * **Pinning.** The leader is not reaped until the very end, so its pid `G` keeps naming our
//!   group and our session (PIN (a) in `group.rs`) through every signal below.
//! * **Finding.** Orphans keep their group and session ids, so `/proc` lists every member that
//!   did not `setsid` (`session.rs`), wherever it was reparented; members that moved to another
//!   group of the session are signalled one by one (`Group::signal_session`).
//! * **Waiting.** The teardown ends once the leader exited and no member runs, and after its
//!   dead members were reaped by whoever they were reparented to (bounded by
//!   [`ORPHAN_REAPING`]: a PID 1 that never reaps must not hang `kill()`).
//!
//! Without `/proc` nothing but the leader can be seen: the group gets SIGTERM, then SIGKILL once
//! the leader exited (or the grace ended), and the teardown does not wait for the rest.

use std::time::Duration;

use tokio::time::Instant;

use super::LocalTree;
use crate::group::Drain;
use crate::poll;
use crate::session;

/// How long the dead members of a killed tree may take to be reaped by the process they were
/// reparented to before the teardown ends anyway. PID 1 on these machines reaps every ~2 s.
const ORPHAN_REAPING: Duration = Duration::from_secs(10);

impl LocalTree {
    pub(super) async fn teardown_without_subreaper(
        &mut self,
        grace: Duration,
        progress: &mut impl FnMut(&Self),
    ) {
        if self.group.is_gone() {
            return;
        }
        let listed = session::members(self.leader()).is_some();
        // A tree that ended by itself (the common case) needs no signal.
        let mut settled = self.nothing_runs();
        let quiet = settled && listed;
        if !quiet && !grace.is_zero() {
            self.group.signal_session(libc::SIGTERM);
            self.group.signal_session(libc::SIGCONT);
            settled = self
                .until_nothing_runs(Some(Instant::now() + grace), None, progress)
                .await;
        }
        if !settled || !listed {
            self.group.signal_session(libc::SIGKILL);
            self.until_nothing_runs(None, Some(libc::SIGKILL), progress)
                .await;
        }
        self.until_members_reaped(Instant::now() + ORPHAN_REAPING)
            .await;
        // The leader is our only child in the group, and it has exited: this reaps it and
        // releases `G`.
        let mut delay = poll::FIRST_POLL;
        while self.group.drain() == Drain::Alive {
            tokio::time::sleep(delay).await;
            delay = poll::next(delay);
        }
        progress(self);
    }

    /// Whether the leader exited and no other member of its session or group is alive.
    /// Without `/proc` only the leader can be seen.
    fn nothing_runs(&mut self) -> bool {
        self.group.leader_exited()
            && session::members(self.leader())
                .is_none_or(|members| members.iter().all(|member| member.zombie))
    }

    /// Polls until nothing runs (`true`) or `deadline` passes (`false`), sending `resignal`
    /// every round: a member started by a fork that raced the last signal gets it too.
    async fn until_nothing_runs(
        &mut self,
        deadline: Option<Instant>,
        resignal: Option<i32>,
        progress: &mut impl FnMut(&Self),
    ) -> bool {
        let mut delay = poll::FIRST_POLL;
        loop {
            if self.nothing_runs() {
                return true;
            }
            progress(self);
            if let Some(signal) = resignal {
                self.group.signal_session(signal);
            }
            if !poll::pause(deadline, &mut delay).await {
                return false;
            }
        }
    }

    /// Waits, up to `deadline`, until no dead member is left for another process to reap.
    async fn until_members_reaped(&self, deadline: Instant) {
        let mut delay = poll::FIRST_POLL;
        while session::members(self.leader()).is_some_and(|members| !members.is_empty()) {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            tokio::time::sleep_until((now + delay).min(deadline)).await;
            delay = poll::next(delay);
        }
    }
}
