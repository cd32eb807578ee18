//! Last-resort owner for groups whose async owner vanished: a spawn whose caller stopped
//! listening, a dropped monitor task (its tokio runtime shut down). Without it such a tree would
//! run on unsupervised, and its dead members would stay zombies forever on hosts whose PID 1
//! does not reap.
//!
//! One lazily started thread, fed through a channel, so `Drop` never blocks and needs no
//! runtime. It SIGKILLs at once (nobody is left to wait out a grace period) and reaps.

use std::sync::mpsc::{self, Sender};
use std::sync::OnceLock;
use std::thread;

use crate::group::Group;

static JANITOR: OnceLock<Option<Sender<Group>>> = OnceLock::new();

/// Takes ownership of a live group, kills its tree and reaps it in the background.
pub(crate) fn adopt(group: Group) {
    let sender = JANITOR.get_or_init(start);
    let rejected = match sender {
        Some(sender) => match sender.send(group) {
            Ok(()) => return,
            Err(mpsc::SendError(group)) => group,
        },
        None => group,
    };
    // No janitor thread (the OS refused to start one): do the work here rather than leak.
    let mut group = rejected;
    group.kill_and_reap_blocking();
}

fn start() -> Option<Sender<Group>> {
    let (sender, receiver) = mpsc::channel::<Group>();
    let spawned = thread::Builder::new()
        .name("aml-process-janitor".into())
        .spawn(move || {
            for mut group in receiver {
                group.kill_and_reap_blocking();
            }
        });
    spawned.ok().map(|_| sender)
}
