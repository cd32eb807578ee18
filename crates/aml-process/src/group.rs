//! One supervised process group, and the only code that signals or reaps it.
//!
//! The group id `G` equals the leader's pid (the child ran `setsid`). A pid/group number is only
//! recycled by the kernel once no process, zombies included, uses it as a pid, group or session.
//! Everything below keeps one invariant:
//!
//! **PIN** — while `gone` is false, `G` provably still names OUR group, because either
//! (a) the leader has not been reaped (its zombie keeps `G` allocated), or
//! (b) the last `waitpid(-G, WNOHANG)` returned 0 and nothing was reaped since: a live child of
//!     ours is in `G`, and nobody but us can reap our children.
//!
//! [`Group::drain`] is the only place that can break (a), and it only returns after a `waitpid`
//! that yields 0 (re-establishing (b)) or `ECHILD` (then `gone` is set and `G` is never used
//! again). [`Group::reap_orphans`] reaps by exact pid and never the leader, so it keeps (a).
//! Signals are sent only while PIN holds, so a recycled `G` is never signalled.
//!
//! Why `ECHILD` means the group is empty: every member descends from the leader (a new session
//! can only be entered via `setsid`, and `setpgid` cannot join a group of another session). When a
//! member dies, its children are reparented to us, since we are a child subreaper (the host, or
//! the supervisor process that started the leader); so the topmost live member always has a
//! parent that is either us (then `waitpid(-G)` sees it) or a process that left `G` (the
//! documented escape, see the crate docs).
//!
//! Residual window: the `waitpid(-G)` right after reaping the LAST member runs on a freed number.
//! For it to touch a stranger, the kernel's cyclic pid allocator would have to hand out `G` again
//! AND that new process would have to be our own child that already made itself a group leader,
//! all between two consecutive syscalls of one loop.

use std::io;

use libc::pid_t;

use crate::janitor;
use crate::poll;
use crate::session;
use crate::status::ExitStatus;
use crate::sys::{self, GroupWait, Peek};

/// Result of one [`Group::drain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drain {
    /// Some member is still alive (PIN (b) holds if the leader is already reaped).
    Alive,
    /// No member is left; the group number is released and must not be used again.
    Gone,
}

/// The reaping state of one group. Not `Clone`: exactly one owner may signal or reap it.
#[derive(Debug)]
pub(crate) struct Group {
    leader: pid_t,
    leader_status: Option<ExitStatus>,
    leader_reaped: bool,
    gone: bool,
}

impl Group {
    /// A group whose leader `leader` is an unreaped child of ours (PIN (a) holds).
    pub(crate) fn new(leader: pid_t) -> Self {
        Group {
            leader,
            leader_status: None,
            leader_reaped: false,
            gone: false,
        }
    }

    pub(crate) fn leader(&self) -> pid_t {
        self.leader
    }

    /// The leader's status once known, from a peek or from reaping it.
    pub(crate) fn leader_status(&self) -> Option<ExitStatus> {
        self.leader_status
    }

    pub(crate) fn is_gone(&self) -> bool {
        self.gone
    }

    /// Records a status observed with `WNOWAIT`; the leader stays a zombie, so PIN (a) holds.
    pub(crate) fn note_leader_exit(&mut self, status: ExitStatus) {
        self.leader_status.get_or_insert(status);
    }

    /// Signals every member. A no-op once the group is gone (the number may be recycled).
    pub(crate) fn signal(&self, signal: i32) -> io::Result<()> {
        if self.gone {
            return Ok(());
        }
        sys::signal_group(self.leader, signal)
    }

    /// Signals every member of the group AND the session `G`, also those that moved to another
    /// group of the session (found in `/proc`, each pinned before it is signalled). Only while
    /// the leader is unreaped, so `G` is ours (PIN (a)): used where orphans do not come back to
    /// us, whose teardown keeps the leader's zombie to the end (`local_tree/without_subreaper.rs`).
    pub(crate) fn signal_session(&self, signal: i32) {
        if self.gone || self.leader_reaped {
            return;
        }
        let _ = sys::signal_group(self.leader, signal);
        let leader = self.leader;
        for member in session::members(leader).unwrap_or_default() {
            if member.outside_group && !member.zombie {
                let _ = sys::signal_process_if(member.pid, signal, || {
                    session::is_member(member.pid, leader)
                });
            }
        }
    }

    /// Peeks at the leader without reaping it (PIN (a) keeps holding); `true` once it exited.
    pub(crate) fn leader_exited(&mut self) -> bool {
        if self.leader_status.is_some() || self.leader_reaped {
            return true;
        }
        match sys::peek_exited(Peek::Pid(self.leader)) {
            Ok(Some((_, status))) => {
                self.note_leader_exit(status);
                true
            }
            Ok(None) => false,
            // No longer ours to wait for: nothing of it is left to pin or wait for.
            Err(_) => true,
        }
    }

    /// Reaps every exited child of ours in the group, the leader included, then reports whether
    /// a member is still alive. Never yields between a reap and the next `waitpid`.
    pub(crate) fn drain(&mut self) -> Drain {
        if self.gone {
            return Drain::Gone;
        }
        loop {
            match sys::reap_group_member(self.leader) {
                Ok(GroupWait::Reaped(pid, status)) => {
                    if pid == self.leader {
                        self.leader_reaped = true;
                        self.leader_status.get_or_insert(status);
                    }
                }
                Ok(GroupWait::Running) => return Drain::Alive,
                // ECHILD, or an errno waitpid never returns for these arguments: either way we
                // can no longer prove the number is ours, so stop using it (the safe direction).
                Ok(GroupWait::Empty) | Err(_) => {
                    self.gone = true;
                    return Drain::Gone;
                }
            }
        }
    }

    /// While the leader runs, reaps members that were orphaned to us and exited, so a
    /// long-running tree does not pile up zombies in the host. Peeks first and reaps by exact
    /// pid, stopping at the leader, so the leader's zombie keeps pinning the group.
    pub(crate) fn reap_orphans(&mut self) {
        if self.gone || self.leader_reaped {
            return;
        }
        while let Ok(Some((pid, status))) = sys::peek_exited(Peek::Group(self.leader)) {
            if pid == self.leader {
                self.note_leader_exit(status);
                return;
            }
            // `pid` is an exited child of ours in a pinned group; only we can reap it.
            if sys::reap_pid(pid).is_err() {
                return;
            }
        }
    }

    /// SIGKILLs the tree and blocks until it is reaped: the last resort when no async owner is
    /// left (see `janitor.rs`).
    pub(crate) fn kill_and_reap_blocking(&mut self) {
        let _ = self.signal(libc::SIGKILL);
        // Where orphans do not come back to us, members outside the group are reached only
        // through the session, and only while the leader still pins it.
        self.signal_session(libc::SIGKILL);
        let mut delay = poll::FIRST_POLL;
        while self.drain() == Drain::Alive {
            std::thread::sleep(delay);
            delay = poll::next(delay);
        }
    }
}

impl Drop for Group {
    /// A group must never be abandoned alive: hand it to the janitor thread.
    fn drop(&mut self) {
        if !self.gone {
            let mut orphan = Group {
                leader: self.leader,
                leader_status: self.leader_status,
                leader_reaped: self.leader_reaped,
                gone: false,
            };
            self.gone = true;
            janitor::adopt(Box::new(move || orphan.kill_and_reap_blocking()));
        }
    }
}
