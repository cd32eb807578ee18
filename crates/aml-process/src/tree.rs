//! One supervised tree as the monitor sees it, wherever its leader's parent is: this process
//! (`local_tree.rs`) or the supervisor process (`supervisor/remote_tree.rs`).

use std::io;
use std::time::Duration;

use libc::pid_t;

use crate::local_tree::LocalTree;
use crate::status::ExitStatus;
use crate::supervisor::remote_tree::RemoteTree;

pub(crate) enum Tree {
    Local(LocalTree),
    Remote(RemoteTree),
}

impl Tree {
    pub(crate) fn leader(&self) -> pid_t {
        match self {
            Tree::Local(tree) => tree.leader(),
            Tree::Remote(tree) => tree.leader(),
        }
    }

    /// The leader's status once known.
    pub(crate) fn leader_status(&self) -> Option<ExitStatus> {
        match self {
            Tree::Local(tree) => tree.leader_status(),
            Tree::Remote(tree) => tree.leader_status(),
        }
    }

    /// Whether every member is dead and reaped.
    pub(crate) fn is_gone(&self) -> bool {
        match self {
            Tree::Local(tree) => tree.is_gone(),
            Tree::Remote(tree) => tree.is_gone(),
        }
    }

    /// Resolves once the leader exited; an error says it can no longer be waited for.
    /// Cancel-safe.
    pub(crate) async fn exited(&mut self) -> io::Result<ExitStatus> {
        match self {
            Tree::Local(tree) => tree.exited().await,
            Tree::Remote(tree) => tree.exited().await,
        }
    }

    /// TERM, `grace`, KILL, and reap until empty; `progress(leader_status, gone)` runs as the
    /// teardown learns them.
    pub(crate) async fn teardown(
        &mut self,
        grace: Duration,
        mut progress: impl FnMut(Option<ExitStatus>, bool),
    ) {
        match self {
            Tree::Local(tree) => {
                tree.teardown(grace, |tree| progress(tree.leader_status(), tree.is_gone()))
                    .await
            }
            Tree::Remote(tree) => {
                tree.teardown(grace, |tree| progress(tree.leader_status(), tree.is_gone()))
                    .await
            }
        }
    }
}
