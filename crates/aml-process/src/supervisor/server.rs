//! The supervisor process's side: it starts every leader the host asks for, is the child
//! subreaper of their trees, and runs `tree/local.rs` on each of them, telling the host when a
//! leader exits and when a tree is gone.
//!
//! One thread does all of it (a current-thread runtime), so the leaders' parent-death signal is
//! tied to a thread that lives as long as this process, and the group invariant of `group.rs`
//! (no await between the drain that proves a group ours and the signal) holds as in the host.
//! A second thread only reads the socket. When the host's end closes (the host is exiting; if
//! it is killed, our own death signal ends us first), every tree is killed and reaped, and the
//! process returns.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use libc::pid_t;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::socket::{send_frame, FrameReader};
use super::wire::{Event, Request};
use crate::group::Group;
use crate::launch::Launch;
use crate::local_tree::LocalTree;
use crate::starter::Starter;
use crate::sys;

type Incoming = (Request, Option<[OwnedFd; 3]>);

/// Serves the host on `socket` until the host closes it.
pub(crate) fn serve(socket: OwnedFd) -> io::Result<()> {
    // Orphans of our trees should come back to us to be reaped (the point of this process). A
    // kernel, emulator (qemu-user answers EINVAL) or seccomp policy may refuse; the supervisor
    // then serves with the reduced guarantee of docs/SANDBOX.md (orphans go to the nearest
    // other subreaper or PID 1) rather than not at all, which left every spawn to a host that
    // cannot be a subreaper either.
    #[cfg(target_os = "linux")]
    let _ = sys::become_subreaper();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let reader = FrameReader::new(socket.try_clone()?);
    let (incoming_tx, incoming) = mpsc::unbounded_channel();
    thread::Builder::new()
        .name("aml-process-supervisor-requests".into())
        .spawn(move || read_requests(reader, &incoming_tx))?;
    let writer = Arc::new(Mutex::new(socket));
    send(&writer, Event::Ready);
    runtime.block_on(run(incoming, writer));
    Ok(())
}

fn read_requests(mut reader: FrameReader, incoming: &mpsc::UnboundedSender<Incoming>) {
    while let Ok(Some(payload)) = reader.next() {
        let Ok(request) = Request::decode(&payload) else {
            return;
        };
        let fds = matches!(request, Request::Spawn { .. })
            .then(|| reader.take_fds())
            .flatten();
        if incoming.send((request, fds)).is_err() {
            return;
        }
    }
}

async fn run(mut incoming: mpsc::UnboundedReceiver<Incoming>, writer: Arc<Mutex<OwnedFd>>) {
    let mut starter = Starter::new();
    let mut teardowns: HashMap<pid_t, oneshot::Sender<Duration>> = HashMap::new();
    let mut trees = JoinSet::new();
    loop {
        let (request, fds) = tokio::select! {
            incoming = incoming.recv() => match incoming {
                Some(incoming) => incoming,
                None => break,
            },
            Some(_) = trees.join_next() => continue,
        };
        match request {
            Request::Spawn {
                id,
                argv,
                envp,
                cwd,
            } => {
                let launch = Launch { argv, envp, cwd };
                let event = match start(&mut starter, &launch, fds) {
                    Ok(pid) => {
                        let (teardown, requested) = oneshot::channel();
                        teardowns.insert(pid, teardown);
                        let notifier = sys::exit_notifier(pid).ok();
                        let tree = LocalTree::new(Group::new(pid), notifier);
                        trees.spawn(supervise(tree, requested, Arc::clone(&writer)));
                        Event::Spawned { id, pid }
                    }
                    Err(error) => Event::SpawnFailed {
                        id,
                        errno: error.raw_os_error().unwrap_or(libc::EIO),
                    },
                };
                send(&writer, event);
            }
            Request::Teardown { pid, grace } => {
                if let Some(teardown) = teardowns.remove(&pid) {
                    let _ = teardown.send(grace);
                }
            }
        }
    }
    // The host is gone: nobody is left to wait out a grace period.
    for (_, teardown) in teardowns.drain() {
        let _ = teardown.send(Duration::ZERO);
    }
    while trees.join_next().await.is_some() {}
}

fn start(starter: &mut Starter, launch: &Launch, fds: Option<[OwnedFd; 3]>) -> io::Result<pid_t> {
    let fds = fds.ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
    // Received descriptors are above 2 here (0, 1 and 2 are taken), but the starters rely on it.
    let [stdin, stdout, stderr] = fds;
    let stdio = [
        sys::above_stdio(stdin)?,
        sys::above_stdio(stdout)?,
        sys::above_stdio(stderr)?,
    ];
    starter.start(launch, &stdio)
}

/// One tree from its spawn to its `Gone`.
async fn supervise(
    mut tree: LocalTree,
    mut requested: oneshot::Receiver<Duration>,
    writer: Arc<Mutex<OwnedFd>>,
) {
    let pid = tree.leader();
    let mut reported = false;
    let grace = tokio::select! {
        grace = &mut requested => grace,
        exited = tree.exited() => {
            if let Ok(status) = exited {
                send(&writer, Event::Exited { pid, status });
                reported = true;
            }
            requested.await
        }
    };
    // A dropped sender means the host is gone: tear down at once.
    let grace = grace.unwrap_or(Duration::ZERO);
    tree.teardown(grace, |tree| {
        if let (false, Some(status)) = (reported, tree.leader_status()) {
            send(&writer, Event::Exited { pid, status });
            reported = true;
        }
    })
    .await;
    send(
        &writer,
        Event::Gone {
            pid,
            status: tree.leader_status(),
        },
    );
}

/// A lost host cannot be told anything; the failed write changes nothing here.
fn send(writer: &Mutex<OwnedFd>, event: Event) {
    let socket = writer.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = send_frame(socket.as_fd(), &event.encode(), &[]);
}
