//! The host's side of the supervisor: one socket, one reader thread that routes events, and
//! writers from any thread (spawns from the callers' tasks, teardowns from monitors and drops).
//!
//! Routing: a spawn registers its event channel under its request id before the request is
//! sent; the reader moves it to the leader's pid when `Spawned` arrives, before it reads the
//! next event, so an `Exited` right behind it always finds its tree. The supervisor mentions a
//! pid again only after a new `Spawned` for it, which comes after that pid's `Gone`.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use libc::pid_t;
use tokio::sync::{mpsc, oneshot};

use super::socket::{send_frame, shut_writes, FrameReader};
use super::wire::{Event, Request};
use crate::launch::Launch;
use crate::sys;

/// What a tree hears about itself: `Exited` and `Gone` events. The channel closes (without a
/// `Gone`) if the supervisor process stops.
pub(crate) type Events = mpsc::UnboundedReceiver<Event>;

type Reply = oneshot::Sender<io::Result<pid_t>>;

#[derive(Default)]
struct Routes {
    pending: HashMap<u64, (Reply, mpsc::UnboundedSender<Event>)>,
    trees: HashMap<pid_t, mpsc::UnboundedSender<Event>>,
    /// Set once the reader saw the socket close: nothing will be routed any more.
    closed: bool,
}

pub(crate) struct Client {
    writer: Arc<Writer>,
    next_id: AtomicU64,
    routes: Arc<Mutex<Routes>>,
    reaped: Arc<Reaped>,
}

/// Set by the reader thread once the supervisor process is reaped.
#[derive(Default)]
struct Reaped {
    done: Mutex<bool>,
    changed: Condvar,
}

/// Our end of the socket, for whole-frame writes.
struct Writer(Mutex<OwnedFd>);

impl Writer {
    fn send(&self, request: &Request, fds: &[i32]) -> io::Result<()> {
        let socket = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        send_frame(socket.as_fd(), &request.encode(), fds)
    }
}

impl Client {
    /// Serves `socket`, our end of a connection to the supervisor process `supervisor` (a child
    /// of ours). The reader thread runs until the supervisor closes its end, then reaps it.
    pub(crate) fn new(socket: OwnedFd, supervisor: pid_t) -> io::Result<Self> {
        let mut reader = FrameReader::new(socket.try_clone()?);
        // Until it says it is ready it may still fail to start (then the host supervises its
        // own trees); blocking here is the spawner thread's first spawn waiting for it.
        let ready = reader.next()?.map(|payload| Event::decode(&payload));
        if !matches!(ready, Some(Ok(Event::Ready))) {
            drop(socket);
            sys::reap_blocking(supervisor);
            return Err(io::Error::other("the process supervisor did not start"));
        }
        let writer = Arc::new(Writer(Mutex::new(socket)));
        let routes = Arc::new(Mutex::new(Routes::default()));
        let reaped = Arc::new(Reaped::default());
        let (shared_routes, shared_writer) = (Arc::clone(&routes), Arc::clone(&writer));
        let shared_reaped = Arc::clone(&reaped);
        thread::Builder::new()
            .name("aml-process-supervisor-events".into())
            .spawn(move || {
                route(reader, &shared_routes, &shared_writer);
                // Its zombie kept the pid ours until now; nobody else waits for it.
                sys::reap_blocking(supervisor);
                *shared_reaped
                    .done
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = true;
                shared_reaped.changed.notify_all();
            })?;
        Ok(Client {
            writer,
            next_id: AtomicU64::new(1),
            routes,
            reaped,
        })
    }

    /// Has the supervisor end every tree at once and exit, and waits up to `within` until it
    /// is reaped. Why: when the host simply exits, the supervisor dies by its death signal and
    /// is reparented to PID 1, which on some machines never reaps it. Returns whether it was
    /// reaped in time; later spawns fail with "process supervisor stopped".
    pub(crate) fn stop(&self, within: Duration) -> bool {
        {
            let socket = self.writer.0.lock().unwrap_or_else(PoisonError::into_inner);
            // Already shut (a second stop) or broken: the reaping below still tells the truth.
            let _ = shut_writes(socket.as_fd());
        }
        let deadline = Instant::now() + within;
        let mut done = self
            .reaped
            .done
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !*done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            done = self
                .reaped
                .changed
                .wait_timeout(done, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Asks the supervisor to start `launch` with `stdio` (the child's pipe ends) as its 0, 1
    /// and 2. Resolves with the leader's pid and the channel of its tree's events.
    pub(crate) async fn spawn(
        &self,
        launch: &Launch,
        stdio: [OwnedFd; 3],
    ) -> io::Result<(pid_t, Events)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        {
            let mut routes = lock(&self.routes);
            if routes.closed {
                return Err(stopped());
            }
            routes.pending.insert(id, (reply, events_tx));
        }
        let request = Request::Spawn {
            id,
            argv: launch.argv.clone(),
            envp: launch.envp.clone(),
            cwd: launch.cwd.clone(),
        };
        let fds = stdio.each_ref().map(AsRawFd::as_raw_fd);
        if let Err(error) = self.send(&request, &fds) {
            lock(&self.routes).pending.remove(&id);
            return Err(error);
        }
        // The supervisor holds its own copies now; ours close here so EOF reaches the host.
        drop(stdio);
        let pid = answer.await.map_err(|_| stopped())??;
        Ok((pid, events))
    }

    /// Asks for the tree of `pid` to be torn down; its `Gone` follows on its channel.
    pub(crate) fn teardown(&self, pid: pid_t, grace: Duration) -> io::Result<()> {
        self.send(&Request::Teardown { pid, grace }, &[])
    }

    fn send(&self, request: &Request, fds: &[i32]) -> io::Result<()> {
        self.writer.send(request, fds)
    }
}

fn route(mut reader: FrameReader, routes: &Mutex<Routes>, writer: &Writer) {
    while let Ok(Some(payload)) = reader.next() {
        let Ok(event) = Event::decode(&payload) else {
            break;
        };
        let mut routes = lock(routes);
        match event {
            Event::Spawned { id, pid } => {
                if let Some((reply, events)) = routes.pending.remove(&id) {
                    routes.trees.insert(pid, events);
                    if reply.send(Ok(pid)).is_err() {
                        // The caller stopped waiting: nobody owns this tree, so end it now.
                        let _ = writer.send(
                            &Request::Teardown {
                                pid,
                                grace: Duration::ZERO,
                            },
                            &[],
                        );
                    }
                }
            }
            Event::SpawnFailed { id, errno } => {
                if let Some((reply, _)) = routes.pending.remove(&id) {
                    let _ = reply.send(Err(io::Error::from_raw_os_error(errno)));
                }
            }
            Event::Ready => {}
            Event::Exited { pid, .. } => {
                if let Some(events) = routes.trees.get(&pid) {
                    let _ = events.send(event);
                }
            }
            Event::Gone { pid, .. } => {
                if let Some(events) = routes.trees.remove(&pid) {
                    let _ = events.send(event);
                }
            }
        }
    }
    // The supervisor is gone (its trees died with it, by their death signal): close every
    // channel so waiting callers fail instead of hanging.
    let mut routes = lock(routes);
    routes.closed = true;
    routes.pending.clear();
    routes.trees.clear();
}

fn lock(routes: &Mutex<Routes>) -> std::sync::MutexGuard<'_, Routes> {
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn stopped() -> io::Error {
    io::Error::other("process supervisor stopped")
}
