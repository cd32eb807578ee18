//! The host side of the Sandbox MCP relay (INVENTORY BA-0 "Sandbox relay"; SPEC §16: a
//! transport-only relay). A guest that cannot reach the host's loopback runs `relay.cjs`
//! (`lib/agents/acp/mcp-relay.cjs`) under `node`: it listens on the guest's `127.0.0.1`, announces
//! `{"kind":"ready","port":N}` and turns each HTTP request into one stdout line; we route it
//! through the bridge's own handler (authentication, 404/405 and all) and answer on its stdin.
//!
//! Frames are JSON lines of at most 8 MiB, bodies base64 (a 4 MiB body is 5.6 MiB encoded,
//! whatever bytes it holds):
//!
//! * relay → host: `{"kind":"request","id":N,"method":M,"path":P,"authorization":A|null,"body":B64}`
//! * host → relay: `{"kind":"response","id":N,"status":S,"allow":"POST"?,"body":B64}`
//!
//! The relay process is external (the Sandbox's `spawn()`), pumped by the binding like an
//! external agent ([`ExternalAgent`]); [`Relay::close`] kills it through that pump.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::bridge::RelayTarget;
use crate::lines::LineSplitter;
use crate::tail::Tail;
use crate::transport::{Child, ExternalAgent, Input, Output};

/// The contract's frame limit, both directions.
pub const RELAY_LINE_LIMIT: usize = 8 * 1024 * 1024;
const STDERR_TAIL: usize = 16 * 1024;
/// How long a relay that ended may take to deliver the rest of its stderr.
const STDERR_SETTLE: Duration = Duration::from_secs(1);
/// A response whose frame would pass the line limit is replaced by this status.
const TOO_LARGE: u16 = 502;

pub const INVALID_READINESS: &str = "Sandbox MCP relay emitted an invalid readiness message";

/// The relay's state as [`Relay::ready`] sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Readiness {
    Waiting,
    Ready(u16),
    /// Output ended before an announcement: the stderr tail (or the exit) says why.
    Ended,
    Failed(String),
}

#[derive(Deserialize)]
struct ReadyFrame {
    kind: String,
    port: u16,
}

#[derive(Deserialize)]
struct RequestFrame {
    kind: String,
    id: u64,
    method: String,
    path: String,
    authorization: Option<String>,
    body: String,
}

struct Shared {
    tail: Mutex<Tail>,
    /// `close()` was asked for: an end from now on is ours, not a failure.
    closing: AtomicBool,
    /// The relay's stdout ended while it was still wanted.
    ended: AtomicBool,
    stderr_done: watch::Sender<bool>,
}

/// A started relay process (maybe not ready yet).
pub struct Relay {
    child: Child,
    shared: Arc<Shared>,
    ready: watch::Receiver<Readiness>,
    stop: CancellationToken,
    kill_grace: Duration,
}

impl Relay {
    /// Serves the relay process `agent` against `target`. Must run inside a tokio runtime.
    pub fn start(target: RelayTarget, agent: ExternalAgent, kill_grace: Duration) -> Relay {
        let (child, input, stdout, stderr) = agent.split();
        let (stderr_done, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            tail: Mutex::new(Tail::new(STDERR_TAIL)),
            closing: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            stderr_done,
        });
        let (ready_tx, ready) = watch::channel(Readiness::Waiting);
        let stop = CancellationToken::new();
        let (answers, answers_rx) = mpsc::channel::<Vec<u8>>(64);
        tokio::spawn(collect_stderr(stderr, Arc::clone(&shared)));
        tokio::spawn(write_answers(input, answers_rx, stop.clone()));
        let reader = Reader {
            target,
            answers,
            shared: Arc::clone(&shared),
            ready: ready_tx,
            stop: stop.clone(),
        };
        tokio::spawn(reader.run(stdout));
        Relay {
            child: Child::External(child),
            shared,
            ready,
            stop,
            kill_grace,
        }
    }

    /// The guest port once the relay announced it, or the documented failure.
    pub async fn ready(&self) -> Result<u16, String> {
        let mut ready = self.ready.clone();
        let state = match ready.wait_for(|state| *state != Readiness::Waiting).await {
            Ok(state) => state.clone(),
            Err(_) => Readiness::Failed(INVALID_READINESS.into()),
        };
        match state {
            Readiness::Ready(port) => Ok(port),
            Readiness::Ended => Err(failure(&self.shared, &self.child).await),
            Readiness::Failed(message) => Err(message),
            Readiness::Waiting => unreachable!("wait_for returned a waiting state"),
        }
    }

    /// Kills the relay's process tree (through its supervisor) and stops serving. Resolves
    /// with the relay's failure when it had ended on its own while still needed.
    pub async fn close(&self) -> Vec<String> {
        let ended_early = self.shared.ended.load(Ordering::SeqCst)
            && !self.shared.closing.swap(true, Ordering::SeqCst);
        self.shared.closing.store(true, Ordering::SeqCst);
        self.stop.cancel();
        self.child.kill(self.kill_grace).await;
        if ended_early && matches!(*self.ready.borrow(), Readiness::Ready(_)) {
            return vec![failure(&self.shared, &self.child).await];
        }
        Vec::new()
    }
}

/// `Sandbox MCP relay failed: <stderr tail>` (or the exit when stderr is empty).
async fn failure(shared: &Shared, child: &Child) -> String {
    let mut done = shared.stderr_done.subscribe();
    let _ = tokio::time::timeout(STDERR_SETTLE, done.wait_for(|done| *done)).await;
    let tail = shared.tail.lock().unwrap_or_else(|p| p.into_inner()).text();
    if !tail.is_empty() {
        return format!("Sandbox MCP relay failed: {tail}");
    }
    let exit = tokio::time::timeout(STDERR_SETTLE, child.wait()).await;
    let detail = match exit {
        Ok(Ok(aml_process::ExitStatus::Exited(code))) => format!("exit code {code}"),
        Ok(Ok(aml_process::ExitStatus::Signaled(signal))) => {
            format!("exited from signal {}", crate::signal_name(signal))
        }
        Ok(Err(error)) => error.to_string(),
        Err(_) => "its output ended".into(),
    };
    format!("Sandbox MCP relay failed: {detail}")
}

async fn collect_stderr(stderr: Output, shared: Arc<Shared>) {
    Tail::collect(stderr, &shared.tail).await;
    shared.stderr_done.send_replace(true);
}

async fn write_answers(
    mut input: Input,
    mut answers: mpsc::Receiver<Vec<u8>>,
    stop: CancellationToken,
) {
    loop {
        let answer = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            answer = answers.recv() => answer,
        };
        let Some(answer) = answer else { return };
        if input.write_all(answer).await.is_err() {
            return;
        }
    }
}

struct Reader {
    target: RelayTarget,
    answers: mpsc::Sender<Vec<u8>>,
    shared: Arc<Shared>,
    ready: watch::Sender<Readiness>,
    stop: CancellationToken,
}

impl Reader {
    async fn run(self, mut stdout: Output) {
        let mut lines = LineSplitter::new(RELAY_LINE_LIMIT);
        let mut announced = false;
        'read: loop {
            let chunk = tokio::select! {
                biased;
                () = self.stop.cancelled() => break 'read,
                chunk = stdout.read_chunk() => chunk,
            };
            let Ok(Some(chunk)) = chunk else { break };
            lines.feed(chunk);
            loop {
                let line = match lines.next_line() {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(_) if !announced => {
                        self.ready
                            .send_replace(Readiness::Failed(INVALID_READINESS.into()));
                        break 'read;
                    }
                    // A relay that breaks framing after readiness is no longer usable.
                    Err(_) => break 'read,
                };
                if announced {
                    self.request(line);
                    continue;
                }
                match serde_json::from_slice::<ReadyFrame>(line) {
                    Ok(frame) if frame.kind == "ready" && frame.port != 0 => {
                        announced = true;
                        self.ready.send_replace(Readiness::Ready(frame.port));
                    }
                    _ => {
                        self.ready
                            .send_replace(Readiness::Failed(INVALID_READINESS.into()));
                        break 'read;
                    }
                }
            }
        }
        self.shared.ended.store(true, Ordering::SeqCst);
        if *self.ready.borrow() == Readiness::Waiting {
            self.ready.send_replace(Readiness::Ended);
        }
    }

    /// Routes one request line on its own task (calls may run concurrently, as over HTTP).
    fn request(&self, line: &[u8]) {
        // Unusable frames are dropped: the relay only sends what it built itself, and its
        // HTTP client then sees no answer rather than a made-up one.
        let Ok(frame) = serde_json::from_slice::<RequestFrame>(line) else {
            return;
        };
        if frame.kind != "request" {
            return;
        }
        let Ok(body) = STANDARD.decode(frame.body.as_bytes()) else {
            return;
        };
        let request = crate::bridge::Request {
            method: frame.method,
            path: frame.path.split('?').next().unwrap_or_default().to_owned(),
            authorization: frame.authorization,
            body,
        };
        let target = self.target.clone();
        let answers = self.answers.clone();
        let stop = self.stop.clone();
        let id = frame.id;
        tokio::spawn(async move {
            let answer = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                answer = target.handle(&request) => answer,
            };
            let _ = answers.send(encode_answer(id, answer)).await;
        });
    }
}

fn encode_answer(id: u64, answer: crate::bridge::Answer) -> Vec<u8> {
    let mut frame = json!({
        "kind": "response",
        "id": id,
        "status": answer.status,
        "body": STANDARD.encode(&answer.body),
    });
    if answer.allow_post {
        frame["allow"] = "POST".into();
    }
    let mut line = frame.to_string().into_bytes();
    if line.len() >= RELAY_LINE_LIMIT {
        line = json!({ "kind": "response", "id": id, "status": TOO_LARGE, "body": "" })
            .to_string()
            .into_bytes();
    }
    line.push(b'\n');
    line
}
