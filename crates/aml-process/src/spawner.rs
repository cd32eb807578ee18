//! The one thread that forks every supervised process.
//!
//! Why a dedicated thread: Linux delivers `PR_SET_PDEATHSIG` when the THREAD that forked the
//! child exits, not when the process does. tokio's blocking-pool threads retire after being idle
//! and napi worker threads come and go, so forking from them would SIGKILL healthy children at
//! random. This thread is started once and never exits, so the signal fires only when the host
//! process itself dies. It also serialises forks, which costs one channel round trip per spawn.
//!
//! Why `std::process` and not `tokio::process`: tokio reaps its children itself (by pid, from an
//! orphan queue, woken by SIGCHLD that libuv also claims in a Node host). Keeping every `waitpid`
//! in `group.rs` is what makes the reaping invariant checkable.

use std::io;
use std::os::fd::OwnedFd;
use std::process::Command;
use std::sync::mpsc::{self, Sender};
use std::sync::OnceLock;
use std::thread;

use tokio::sync::oneshot;

use crate::group::Group;
use crate::sys;

/// A freshly started child: its group (PIN (a) holds) and our ends of its pipes.
pub(crate) struct Spawned {
    pub(crate) group: Group,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
    /// Readable once the leader exits; `None` where pidfds are unavailable.
    pub(crate) pidfd: Option<OwnedFd>,
}

struct Job {
    command: Command,
    reply: oneshot::Sender<io::Result<Spawned>>,
}

static SPAWNER: OnceLock<Option<Sender<Job>>> = OnceLock::new();

/// Starts `command` as the leader of a new session and process group, with the parent-death
/// signal armed (Linux).
pub(crate) async fn spawn(mut command: Command) -> io::Result<Spawned> {
    sys::isolate_child(&mut command);
    let (reply, answer) = oneshot::channel();
    submit(Job { command, reply })?;
    // If this future is dropped before the answer arrives, the spawner's `send` fails and the
    // returned `Spawned` is dropped there: `Group::drop` hands the tree to the janitor.
    answer
        .await
        .map_err(|_| io::Error::other("process spawner thread stopped"))?
}

fn submit(job: Job) -> io::Result<()> {
    match SPAWNER.get_or_init(start) {
        Some(sender) => sender
            .send(job)
            .map_err(|_| io::Error::other("process spawner thread stopped")),
        None => Err(io::Error::other("process spawner thread could not start")),
    }
}

fn start() -> Option<Sender<Job>> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let spawned = thread::Builder::new()
        .name("aml-process-spawner".into())
        .spawn(move || {
            // Lazily, on first spawn: orphans of our trees must come back to us to be reaped.
            // If the kernel refuses, orphans go to PID 1 as before; nothing else changes.
            #[cfg(target_os = "linux")]
            let _ = sys::become_subreaper();
            for Job { mut command, reply } in receiver {
                let _ = reply.send(spawn_one(&mut command));
            }
        });
    spawned.ok().map(|_| sender)
}

fn spawn_one(command: &mut Command) -> io::Result<Spawned> {
    let mut child = command.spawn()?;
    // Pids always fit in pid_t; std merely widens them to u32.
    let leader = child.id() as libc::pid_t;
    // From here on an early return drops `group`, which hands the live tree to the janitor.
    let group = Group::new(leader);
    let missing = || io::Error::other("child pipe missing");
    let stdin = OwnedFd::from(child.stdin.take().ok_or_else(missing)?);
    let stdout = OwnedFd::from(child.stdout.take().ok_or_else(missing)?);
    let stderr = OwnedFd::from(child.stderr.take().ok_or_else(missing)?);
    #[cfg(target_os = "linux")]
    let pidfd = sys::pidfd_open(leader).ok();
    #[cfg(not(target_os = "linux"))]
    let pidfd = None;
    // `child` (std's handle) is dropped without waiting: reaping belongs to `Group`.
    Ok(Spawned {
        group,
        stdin,
        stdout,
        stderr,
        pidfd,
    })
}
