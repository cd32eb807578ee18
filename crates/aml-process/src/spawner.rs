//! Where every supervised process is started: the supervisor process when there is one
//! (`supervisor/`), otherwise the one spawner thread of this process.
//!
//! Why a dedicated thread: Linux delivers `PR_SET_PDEATHSIG` when the THREAD that created the
//! child exits, not when the process does. tokio's blocking-pool threads retire after being idle
//! and napi worker threads come and go, so creating children from them would SIGKILL healthy
//! children at random. This thread is started once and never exits, so the signal fires only
//! when the host process itself dies. It creates the supervisor process (whose own leaders
//! then die with it), or, without one, every leader; it serialises those spawns (one channel
//! round trip each), which lets every child reuse one pre-allocated child stack (`vfork/`).
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

use crate::group::Group;
use crate::launch::Launch;
use crate::pipes::stdio_pipes;
use crate::starter::Starter;
use crate::supervisor::client::Client;
use crate::supervisor::remote_tree::RemoteTree;
use crate::sys;

/// A freshly started child: who supervises its tree, and our ends of its pipes.
pub(crate) struct Spawned {
    pub(crate) tree: Started,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// The tree of a fresh child, before its owner (inside a tokio runtime) starts watching it.
pub(crate) enum Started {
    /// A child of this process (PIN (a) holds), and its exit notifier (`sys::exit_notifier`) where the platform has one.
    Local(Group, Option<OwnedFd>),
    /// A child of the supervisor process.
    Remote(RemoteTree),
}

struct Job {
    launch: Launch,
    reply: oneshot::Sender<io::Result<Spawned>>,
}

struct Spawner {
    jobs: Sender<Job>,
    supervisor: Option<&'static Client>,
}

static SPAWNER: OnceLock<Option<Spawner>> = OnceLock::new();

/// Starts `launch` as the leader of a new session and process group, with the parent-death
/// signal armed (Linux).
pub(crate) async fn spawn(launch: Launch) -> io::Result<Spawned> {
    let spawner = SPAWNER
        .get_or_init(start)
        .as_ref()
        .ok_or_else(|| io::Error::other("process spawner thread could not start"))?;
    if let Some(client) = spawner.supervisor {
        let ([stdin, stdout, stderr], child) = stdio_pipes()?;
        let (pid, events) = client.spawn(&launch, child).await?;
        return Ok(Spawned {
            tree: Started::Remote(RemoteTree::new(pid, events, client)),
            stdin,
            stdout,
            stderr,
        });
    }
    let (reply, answer) = oneshot::channel();
    spawner
        .jobs
        .send(Job { launch, reply })
        .map_err(|_| io::Error::other("process spawner thread stopped"))?;
    // If this future is dropped before the answer arrives, the spawner's `send` fails and the
    // returned `Spawned` is dropped there: `Group::drop` hands the tree to the janitor.
    answer
        .await
        .map_err(|_| io::Error::other("process spawner thread stopped"))?
}

/// Ends the supervisor process before the host exits: every tree it still holds is killed at
/// once, and the supervisor is reaped by us rather than left to PID 1 (see `Client::stop`).
/// Waits up to `within`; returns whether no supervisor is left unreaped. Later spawns fail.
pub fn stop_supervisor(within: std::time::Duration) -> bool {
    match SPAWNER.get() {
        Some(Some(Spawner {
            supervisor: Some(client),
            ..
        })) => client.stop(within),
        _ => true,
    }
}

fn start() -> Option<Spawner> {
    let (jobs, receiver) = mpsc::channel::<Job>();
    let (ready, supervisor) = mpsc::channel::<Option<Client>>();
    let spawned = thread::Builder::new()
        .name("aml-process-spawner".into())
        .spawn(move || {
            let mut starter = Starter::new();
            let client = crate::supervisor::command()
                .and_then(|command| crate::supervisor::start::start(&mut starter, command).ok());
            // Without a supervisor process, orphans of our trees must come back to us to be
            // reaped. If the kernel refuses, orphans go to PID 1 as before; nothing else changes.
            #[cfg(target_os = "linux")]
            if client.is_none() {
                let _ = sys::become_subreaper();
            }
            let _ = ready.send(client);
            for Job { launch, reply } in receiver {
                let _ = reply.send(spawn_one(&mut starter, &launch));
            }
        });
    spawned.ok()?;
    let supervisor = supervisor.recv().ok()?;
    Some(Spawner {
        jobs,
        // One client for the life of the process: leaking it is what makes it 'static.
        supervisor: supervisor.map(|client| &*Box::leak(Box::new(client))),
    })
}

fn spawn_one(starter: &mut Starter, launch: &Launch) -> io::Result<Spawned> {
    let ([stdin, stdout, stderr], child) = stdio_pipes()?;
    let pid = starter.start(launch, &child)?;
    // `child` closes here, so the host sees EOF once the child (and its descendants) close
    // their copies. From here on an early return drops `group`, which hands the live tree to
    // the janitor.
    drop(child);
    let group = Group::new(pid);
    let notifier = sys::exit_notifier(pid).ok();
    Ok(Spawned {
        tree: Started::Local(group, notifier),
        stdin,
        stdout,
        stderr,
    })
}
