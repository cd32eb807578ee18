//! Last-resort owner for groups whose async owner vanished: a spawn whose caller stopped
//! listening, a dropped monitor task (its tokio runtime shut down). Without it such a tree would
//! run on unsupervised, and its dead members would stay zombies forever on hosts whose PID 1
//! does not reap.
//!
//! One lazily started thread, fed through a channel, so `Drop` never blocks and needs no
//! runtime. The job it gets SIGKILLs at once (nobody is left to wait out a grace period) and
//! reaps. Jobs are closures so that this module sits below `group.rs`, whose `Drop` calls it.

use std::sync::mpsc::{self, Sender};
use std::sync::OnceLock;
use std::thread;

/// Blocking work that kills and reaps one abandoned tree.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

static JANITOR: OnceLock<Option<Sender<Job>>> = OnceLock::new();

/// Runs `job` in the background.
pub(crate) fn adopt(job: Job) {
    let sender = JANITOR.get_or_init(start);
    let rejected = match sender {
        Some(sender) => match sender.send(job) {
            Ok(()) => return,
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    // No janitor thread (the OS refused to start one): do the work here rather than leak.
    rejected();
}

fn start() -> Option<Sender<Job>> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let spawned = thread::Builder::new()
        .name("aml-process-janitor".into())
        .spawn(move || {
            for job in receiver {
                job();
            }
        });
    spawned.ok().map(|_| sender)
}
