//! The host's view of a tree that the supervisor process owns: its events, and the one
//! teardown request the host may send for it.

use std::io;
use std::time::Duration;

use libc::pid_t;

use super::client::{stopped, Client, Events};
use super::wire::Event;
use crate::status::ExitStatus;

pub(crate) struct RemoteTree {
    pid: pid_t,
    events: Events,
    client: &'static Client,
    leader_status: Option<ExitStatus>,
    gone: bool,
    teardown_requested: bool,
}

impl RemoteTree {
    pub(crate) fn new(pid: pid_t, events: Events, client: &'static Client) -> Self {
        RemoteTree {
            pid,
            events,
            client,
            leader_status: None,
            gone: false,
            teardown_requested: false,
        }
    }

    pub(crate) fn leader(&self) -> pid_t {
        self.pid
    }

    pub(crate) fn leader_status(&self) -> Option<ExitStatus> {
        self.leader_status
    }

    pub(crate) fn is_gone(&self) -> bool {
        self.gone
    }

    /// Resolves with the leader's status once the supervisor saw it exit. Cancel-safe.
    pub(crate) async fn exited(&mut self) -> io::Result<ExitStatus> {
        loop {
            self.next_event().await;
            if let Some(status) = self.leader_status {
                return Ok(status);
            }
            if self.gone {
                return Err(stopped());
            }
        }
    }

    /// Asks for the teardown (TERM, `grace`, KILL, reap) and waits for the tree to be gone;
    /// `progress` runs whenever the leader's status or the tree's fate is learnt.
    pub(crate) async fn teardown(&mut self, grace: Duration, mut progress: impl FnMut(&Self)) {
        if self.gone {
            return;
        }
        if !self.teardown_requested {
            self.teardown_requested = true;
            if self.client.teardown(self.pid, grace).is_err() {
                // The supervisor is gone, and its trees died with it.
                self.gone = true;
                return;
            }
        }
        while !self.gone {
            self.next_event().await;
            progress(self);
        }
    }

    async fn next_event(&mut self) {
        match self.events.recv().await {
            Some(Event::Exited { status, .. }) => {
                self.leader_status.get_or_insert(status);
            }
            Some(Event::Gone { status, .. }) => {
                if let Some(status) = status {
                    self.leader_status.get_or_insert(status);
                }
                self.gone = true;
            }
            Some(_) => {}
            // The supervisor stopped; its leaders got their death signal with it.
            None => self.gone = true,
        }
    }
}

impl Drop for RemoteTree {
    /// A tree must never be abandoned alive: ask the supervisor to end it at once (a short,
    /// whole-frame socket write; the supervisor's reader drains the socket continuously).
    fn drop(&mut self) {
        if !self.gone && !self.teardown_requested {
            let _ = self.client.teardown(self.pid, Duration::ZERO);
        }
    }
}
