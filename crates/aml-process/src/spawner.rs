//! The one thread that starts every supervised process.
//!
//! Why a dedicated thread: Linux delivers `PR_SET_PDEATHSIG` when the THREAD that created the
//! child exits, not when the process does. tokio's blocking-pool threads retire after being idle
//! and napi worker threads come and go, so creating children from them would SIGKILL healthy
//! children at random. This thread is started once and never exits, so the signal fires only
//! when the host process itself dies. It also serialises spawns (one channel round trip each),
//! which lets every child reuse one pre-allocated child stack (`vfork/`).
//!
//! Why not `std::process` / `tokio::process` on Linux: std's only hook for the death signal is
//! `pre_exec`, which forces a plain `fork()` whose cost grows with the host's memory; tokio
//! also reaps its children itself (by pid, from an orphan queue, woken by SIGCHLD that libuv
//! also claims in a Node host). Keeping every `waitpid` of a started child in `group.rs` is
//! what makes the reaping invariant checkable.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::mpsc::{self, Sender};
use std::sync::OnceLock;
use std::thread;

use tokio::sync::oneshot;

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
use crate::fork::Starter;
use crate::group::Group;
use crate::launch::Launch;
use crate::sys;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use crate::vfork::Starter;

/// A child that has exec'd: an unreaped child of ours, leader of its own session, and our ends
/// of its pipes.
pub(crate) struct Child {
    pub(crate) pid: libc::pid_t,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// Our ends of a child's stdin, stdout and stderr, and the child's ends (same order), all
/// CLOEXEC. The child's ends are above 2, so moving them onto 0, 1 and 2 never overwrites one
/// still to be moved: a host running with stdin closed gets fd 0 back from `pipe()`, and std's
/// own pipes then silently lost the child's stdin (dup2 onto itself keeps CLOEXEC).
pub(crate) fn stdio_pipes() -> io::Result<([OwnedFd; 3], [OwnedFd; 3])> {
    let (stdin_read, stdin_write) = io::pipe()?;
    let (stdout_read, stdout_write) = io::pipe()?;
    let (stderr_read, stderr_write) = io::pipe()?;
    let child = [
        sys::above_stdio(stdin_read.into())?,
        sys::above_stdio(stdout_write.into())?,
        sys::above_stdio(stderr_write.into())?,
    ];
    Ok((
        [stdin_write.into(), stdout_read.into(), stderr_read.into()],
        child,
    ))
}

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
    launch: Launch,
    reply: oneshot::Sender<io::Result<Spawned>>,
}

static SPAWNER: OnceLock<Option<Sender<Job>>> = OnceLock::new();

/// Starts `launch` as the leader of a new session and process group, with the parent-death
/// signal armed (Linux).
pub(crate) async fn spawn(launch: Launch) -> io::Result<Spawned> {
    let (reply, answer) = oneshot::channel();
    submit(Job { launch, reply })?;
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
            let mut starter = Starter::new();
            for Job { launch, reply } in receiver {
                let _ = reply.send(spawn_one(&mut starter, &launch));
            }
        });
    spawned.ok().map(|_| sender)
}

fn spawn_one(starter: &mut Starter, launch: &Launch) -> io::Result<Spawned> {
    let Child {
        pid,
        stdin,
        stdout,
        stderr,
    } = starter.start(launch)?;
    // From here on an early return drops `group`, which hands the live tree to the janitor.
    let group = Group::new(pid);
    #[cfg(target_os = "linux")]
    let pidfd = sys::pidfd_open(pid).ok();
    #[cfg(not(target_os = "linux"))]
    let pidfd = None;
    Ok(Spawned {
        group,
        stdin,
        stdout,
        stderr,
        pidfd,
    })
}
