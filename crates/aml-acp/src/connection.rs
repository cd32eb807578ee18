//! One JSON-RPC connection over an agent's stdio: a writer task that owns stdin, a reader
//! task that owns stdout, a stderr task keeping the bounded tail, and the table of requests
//! waiting for replies.
//!
//! The reader answers `session/request_permission` itself (by policy, no round trip to the
//! session) and forwards `session/update` notifications into the session's event channel,
//! awaiting capacity: a slow observer stops us reading stdout, which in turn blocks the
//! agent's writes. That is the whole memory bound for an update flood.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::{AcpError, ErrorKind};
use crate::events::{Detail, Event, UpdateDetail};
use crate::lines::LineSplitter;
use crate::permission::{self, PermissionPolicy};
use crate::tail::Tail;
use crate::transport::{Input, Output};
use crate::wire::{self, Incoming};

pub type Reply = Result<Box<RawValue>, AcpError>;

/// The reader's reason at end of stdout: usually the process is exiting.
pub const OUTPUT_CLOSED: &str = "ACP Agent closed its output";

/// Lines queued for stdin. Small: the writer drains it as fast as the agent reads.
const OUTGOING: usize = 64;
/// A read this short while updates stream means the agent writes them one by one.
const SMALL_READ: usize = 16 * 1024;
/// How long such an agent's writes may gather before the next read: from tokio's timer
/// granularity, doubling while the agent keeps streaming, up to a bound far below any
/// model's latency. Each gathered batch costs one wake-up instead of one per update; a
/// reply that arrives meanwhile waits at most `GATHER_MAX`.
const GATHER_MIN: Duration = Duration::from_millis(1);
const GATHER_MAX: Duration = Duration::from_millis(4);

#[derive(Default)]
struct Pending {
    waiting: HashMap<u64, oneshot::Sender<Reply>>,
    /// Set once the reader stopped: every later request fails with this at once.
    closed: Option<AcpError>,
}

/// The turn's response text (`agent_message_chunk` text blocks, concatenated).
struct Text {
    text: String,
    limit: usize,
    overflowed: bool,
}

/// State shared by the session and the connection's tasks.
pub struct Shared {
    pending: Mutex<Pending>,
    text: Mutex<Text>,
    /// `session/cancel` was sent: permission requests are answered "cancelled".
    cancelling: AtomicBool,
    policy: PermissionPolicy,
    stderr: Mutex<Tail>,
    detail: UpdateDetail,
}

impl Shared {
    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_text(&self) -> std::sync::MutexGuard<'_, Text> {
        self.text.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail_all(&self, error: AcpError) {
        let mut pending = self.lock_pending();
        pending.closed.get_or_insert(error.clone());
        for (_, waiter) in pending.waiting.drain() {
            let _ = waiter.send(Err(error.clone()));
        }
    }

    fn resolve(&self, id: u64, reply: Reply) {
        // An id we never issued (or already answered) is ignored.
        if let Some(waiter) = self.lock_pending().waiting.remove(&id) {
            let _ = waiter.send(reply);
        }
    }

    /// Takes the text gathered so far; `Err` when it outgrew its limit.
    pub fn take_text(&self) -> Result<String, AcpError> {
        let mut text = self.lock_text();
        let taken = std::mem::take(&mut text.text);
        if std::mem::take(&mut text.overflowed) {
            return Err(AcpError::protocol(format!(
                "ACP Agent response text exceeded {} bytes",
                text.limit
            )));
        }
        Ok(taken)
    }

    fn append_text(&self, chunk: &str) {
        let mut text = self.lock_text();
        if text.overflowed {
            return;
        }
        if text.text.len() + chunk.len() > text.limit {
            text.overflowed = true;
            text.text = String::new();
            return;
        }
        text.text.push_str(chunk);
    }

    pub fn set_cancelling(&self) {
        self.cancelling.store(true, Ordering::Release);
    }

    pub fn clear_cancelling(&self) {
        self.cancelling.store(false, Ordering::Release);
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).text()
    }
}

/// Limits of one connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub line: usize,
    pub stderr_tail: usize,
    pub text: usize,
}

/// The session's side of the connection.
pub struct Connection {
    pub shared: Arc<Shared>,
    out: Option<mpsc::Sender<Vec<u8>>>,
    next_id: u64,
    /// Cancelled when the reader has stopped (stdout ended or broke the protocol).
    pub reader_done: CancellationToken,
    /// Cancelled when stderr has ended.
    pub stderr_done: CancellationToken,
    tasks: [tokio::task::JoinHandle<()>; 3],
}

impl Connection {
    pub fn start(
        stdin: Input,
        stdout: Output,
        stderr: Output,
        events: mpsc::Sender<Event>,
        policy: PermissionPolicy,
        detail: UpdateDetail,
        limits: ConnectionLimits,
    ) -> Connection {
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            text: Mutex::new(Text {
                text: String::new(),
                limit: limits.text,
                overflowed: false,
            }),
            cancelling: AtomicBool::new(false),
            policy,
            stderr: Mutex::new(Tail::new(limits.stderr_tail)),
            detail,
        });
        let (out, outgoing) = mpsc::channel(OUTGOING);
        let writer = tokio::spawn(write_loop(stdin, outgoing));
        let reader_done = CancellationToken::new();
        let stderr_done = CancellationToken::new();
        let reader = tokio::spawn(read_loop(
            stdout,
            Arc::clone(&shared),
            out.clone(),
            events,
            limits.line,
            reader_done.clone(),
        ));
        let errors = tokio::spawn(stderr_loop(
            stderr,
            Arc::clone(&shared),
            stderr_done.clone(),
        ));
        Connection {
            shared,
            out: Some(out),
            next_id: 0,
            reader_done,
            stderr_done,
            tasks: [writer, reader, errors],
        }
    }

    /// Sends a request; the receiver yields its reply (or the reason none will come).
    pub async fn request(&mut self, method: &str, params: &Value) -> oneshot::Receiver<Reply> {
        self.next_id += 1;
        let id = self.next_id;
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.shared.lock_pending();
            if let Some(error) = &pending.closed {
                let _ = tx.send(Err(error.clone()));
                return rx;
            }
            pending.waiting.insert(id, tx);
        }
        self.send(wire::request(id, method, params)).await;
        rx
    }

    pub async fn notify(&self, method: &str, params: &Value) {
        self.send(wire::notification(method, params)).await;
    }

    async fn send(&self, line: Vec<u8>) {
        // A stopped writer means stdin is gone; the exit race reports why.
        if let Some(out) = &self.out {
            let _ = out.send(line).await;
        }
    }

    /// Closes our end of the connection: stdin is dropped (EOF for the agent) even if the
    /// writer is blocked on an agent that stopped reading.
    pub fn close(&mut self) {
        self.out = None;
        self.tasks[0].abort();
    }

    /// Stops the reader and stderr tasks, for a process that left a descendant outside its
    /// group holding the pipes open (the group itself is gone by then).
    pub fn abandon(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn write_loop(mut stdin: Input, mut outgoing: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = outgoing.recv().await {
        if stdin.write_all(line).await.is_err() {
            return;
        }
    }
}

async fn stderr_loop(stderr: Output, shared: Arc<Shared>, done: CancellationToken) {
    Tail::collect(stderr, &shared.stderr).await;
    done.cancel();
}

async fn read_loop(
    mut stdout: Output,
    shared: Arc<Shared>,
    out: mpsc::Sender<Vec<u8>>,
    events: mpsc::Sender<Event>,
    line_limit: usize,
    done: CancellationToken,
) {
    let mut splitter = LineSplitter::new(line_limit);
    let mut gather = GATHER_MIN;
    let reason = 'read: loop {
        let chunk = match stdout.read_chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break AcpError::protocol(OUTPUT_CLOSED),
            Err(error) => {
                break AcpError::protocol(format!("ACP Agent output could not be read: {error}"))
            }
        };
        let small = chunk.len() < SMALL_READ;
        splitter.feed(chunk);
        let mut streaming = false;
        loop {
            match splitter.next_line() {
                Ok(Some(line)) => streaming |= handle(line, &shared, &out, &events).await,
                Ok(None) => break,
                Err(oversize) => {
                    break 'read AcpError::protocol(format!(
                        "ACP Agent sent a message line longer than {} bytes",
                        oversize.limit
                    ))
                }
            }
        }
        // An agent streaming updates one small write at a time would cost us a wake-up and a
        // read per update; letting its writes gather briefly turns that into one per batch.
        if streaming && small {
            if let Err(error) = stdout.gather(gather).await {
                break AcpError::protocol(format!("ACP Agent output could not be read: {error}"));
            }
            gather = (gather * 2).min(GATHER_MAX);
        } else {
            gather = GATHER_MIN;
        }
    };
    shared.fail_all(reason);
    done.cancel();
}

/// Handles one line; `true` for a `session/update` (the streaming case).
async fn handle(
    line: &[u8],
    shared: &Shared,
    out: &mpsc::Sender<Vec<u8>>,
    events: &mpsc::Sender<Event>,
) -> bool {
    let incoming = if shared.detail.get() == Detail::Full {
        wire::classify(line)
    } else {
        wire::classify_update_first(line)
    };
    match incoming {
        Incoming::Response {
            id: Some(id),
            outcome,
        } => {
            let reply = outcome
                .map(|raw| raw.to_owned())
                .map_err(|error| AcpError::new(ErrorKind::Agent, error.message));
            shared.resolve(id, reply);
        }
        Incoming::Update(update) => {
            if let Some(event) = fast_update_event(update, shared) {
                let _ = events.send(event).await;
            }
            return true;
        }
        Incoming::Notification { method, params } if method == "session/update" => {
            if let Some(event) = params.and_then(|params| update_event(params, shared)) {
                let _ = events.send(event).await;
            }
            return true;
        }
        Incoming::Request { id, method, params } => {
            let reply = if method == "session/request_permission" {
                let cancelling = shared.cancelling.load(Ordering::Acquire);
                let result = permission::answer(shared.policy, params.map(|p| p.get()), cancelling);
                wire::result(id, &result)
            } else {
                // We advertise no client capabilities, so nothing else is ours to serve.
                wire::error(id, -32601, &format!("Method not found: {method}"))
            };
            let _ = out.send(reply).await;
        }
        // Unknown ids, other notifications and lines that are not JSON-RPC are ignored.
        _ => {}
    }
    false
}

/// An update read in one pass (the observer wants no raw copy of it).
fn fast_update_event(update: wire::FastUpdate<'_>, shared: &Shared) -> Option<Event> {
    let params = update.params;
    head_event(params.session_id, params.update, None, shared)
}

fn update_event(params: &RawValue, shared: &Shared) -> Option<Event> {
    let params: wire::UpdateParams = serde_json::from_str(params.get()).ok()?;
    let head: wire::UpdateHead = serde_json::from_str(params.update.get()).ok()?;
    head_event(params.session_id, head, Some(params.update), shared)
}

/// Gathers a message chunk's text; the event for the observer's detail (`raw` is the
/// update's JSON, copied only for full detail).
fn head_event(
    session_id: Cow<'_, str>,
    head: wire::UpdateHead<'_>,
    raw: Option<&RawValue>,
    shared: &Shared,
) -> Option<Event> {
    let detail = shared.detail.get();
    let mut tool_name = None;
    match head.session_update.as_ref() {
        "agent_message_chunk" => {
            if let Some(text) = head.content.and_then(wire::chunk_text) {
                shared.append_text(&text);
            }
        }
        "tool_call" if detail != Detail::None => tool_name = wire::string_name(head.name),
        _ => {}
    }
    if detail == Detail::None {
        return None;
    }
    Some(Event::Update {
        session_id: session_id.into_owned(),
        session_update: head.session_update.into_owned(),
        tool_name,
        update: raw
            .filter(|_| detail == Detail::Full)
            .map(|raw| raw.get().to_owned()),
    })
}
