//! Noticing that the leader exited, without reaping it and without a SIGCHLD handler.
//!
//! A pidfd (Linux) or a kqueue with `EVFILT_PROC` (Darwin, FreeBSD) turns "the leader exited"
//! into fd readiness on tokio's reactor: no signal handler to fight libuv over in a Node host,
//! and no thread parked in `waitid`. Where neither exists (other Unixes, old kernels, seccomp
//! filters, emulators that refuse them) we poll with a capped backoff. Either way the status is read with
//! `WNOWAIT`, so the leader stays a zombie and keeps its group pinned (see `group.rs`).

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use libc::pid_t;

use crate::poll::{self, FIRST_POLL};
use crate::status::ExitStatus;
use crate::sys::{self, Peek};

pub(crate) struct LeaderExit {
    leader: pid_t,
    notifier: Option<tokio::io::unix::AsyncFd<OwnedFd>>,
    poll: Duration,
}

impl LeaderExit {
    /// Must be called inside a tokio runtime (the notifier is registered with its reactor).
    pub(crate) fn new(leader: pid_t, notifier: Option<OwnedFd>) -> Self {
        LeaderExit {
            leader,
            notifier: notifier.and_then(sys::watch_exit),
            poll: FIRST_POLL,
        }
    }

    /// Resolves with the leader's status once it has exited. Cancel-safe: dropping the future
    /// loses nothing, so it can sit in a `select!` loop. Must not be called after the leader was
    /// reaped (its pid could then name a stranger).
    pub(crate) async fn exited(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.peek()? {
                return Ok(status);
            }
            if let Some(notifier) = &self.notifier {
                let mut ready = notifier.readable().await?;
                if let Some((_, status)) = sys::peek_exited(Peek::Pid(self.leader))? {
                    return Ok(status);
                }
                ready.clear_ready();
                continue;
            }
            tokio::time::sleep(self.poll).await;
            self.poll = poll::next(self.poll);
        }
    }

    fn peek(&self) -> io::Result<Option<ExitStatus>> {
        Ok(sys::peek_exited(Peek::Pid(self.leader))?.map(|(_, status)| status))
    }
}
