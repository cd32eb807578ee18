//! One loopback connection of the loop bridge: `hyper`'s HTTP/1.1 server connection, polled by
//! hand on the host's thread with no runtime (`docs/DEPENDENCIES.md`, "MCP Tool bridge").
//!
//! Why hyper polled by hand: hyper owns the framing (head and body parsing, keep-alive,
//! pipelining, `Connection: close`, error answers such as 431), and polling it where the bytes
//! arrive keeps the loop bridge's one property, no thread hop per Tool call. The bytes the host
//! read are handed to hyper through an in-memory transport; what hyper writes is handed back.
//! A Tool call leaves the service future pending on a oneshot until the host answers it.
//!
//! The bridge's own rules stay ours and are applied before hyper would read a body: a
//! `Transfer-Encoding` is 411 (MCP clients send lengths; refuse rather than misread), a declared
//! length over [`BODY_LIMIT`] is 413, both closing the connection.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use aml_ports::{ToolCallError, ToolRef};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, AUTHORIZATION, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Request as HttpRequest, Response, StatusCode};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::bridge::{call_answer, route_sync, Request, Routed, Served, BODY_LIMIT};

/// Largest request head; hyper answers 431 past it (its read buffer, which also bounds what a
/// pipelining client can queue ahead of an answer).
const HEAD_LIMIT: usize = 64 * 1024;

type Outcome = Result<Value, ToolCallError>;

/// What passes between the host and hyper on one connection.
#[derive(Default)]
struct Pipes {
    /// Bytes read from the socket that hyper has not taken yet.
    inbound: Vec<u8>,
    /// Bytes hyper wrote, for the host to send.
    outbound: Vec<u8>,
    /// A Tool call the service is waiting on, not yet handed to the host.
    call: Option<(ToolRef, String)>,
    /// Where the host's answer to the call out goes.
    reply: Option<oneshot::Sender<Outcome>>,
}

type Shared = Arc<Mutex<Pipes>>;

fn lock(pipes: &Shared) -> std::sync::MutexGuard<'_, Pipes> {
    pipes
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// hyper's transport: reads what the host fed, writes into the outbound buffer.
struct Transport(Shared);

impl hyper::rt::Read for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let mut pipes = lock(&self.0);
        if pipes.inbound.is_empty() {
            // The host polls again after its next feed; no waker is needed.
            return Poll::Pending;
        }
        // SAFETY: only initialised bytes are put (put_slice copies into the uninit tail).
        let room = unsafe { buf.as_mut() }.len();
        let n = pipes.inbound.len().min(room);
        buf.put_slice(&pipes.inbound[..n]);
        pipes.inbound.drain(..n);
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        lock(&self.0).outbound.extend_from_slice(bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Records a wake-up during a poll, so the pump polls once more instead of stalling.
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

type Serving = Pin<Box<dyn Future<Output = hyper::Result<()>> + Send>>;

/// One connection: hyper's connection future and the pipes it talks through.
pub(crate) struct Connection {
    pipes: Shared,
    serving: Option<Serving>,
    woken: Arc<Woken>,
    waker: Waker,
}

/// What one step of a connection produced.
#[derive(Default)]
pub(crate) struct Step {
    pub write: Vec<u8>,
    pub call: Option<(ToolRef, String)>,
    pub close: bool,
}

impl Connection {
    pub(crate) fn new(served: Arc<Served>) -> Connection {
        let pipes: Shared = Arc::default();
        let service_pipes = Arc::clone(&pipes);
        let service = hyper::service::service_fn(move |request| {
            respond(Arc::clone(&served), Arc::clone(&service_pipes), request)
        });
        let serving = hyper::server::conn::http1::Builder::new()
            .title_case_headers(true)
            .auto_date_header(false)
            .header_read_timeout(None)
            .max_buf_size(HEAD_LIMIT)
            .serve_connection(Transport(Arc::clone(&pipes)), service);
        let woken = Arc::new(Woken(AtomicBool::new(false)));
        Connection {
            pipes,
            serving: Some(Box::pin(serving)),
            waker: Waker::from(Arc::clone(&woken)),
            woken,
        }
    }

    /// Hands `bytes` to hyper and runs it as far as it goes.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Step {
        if self.serving.is_none() {
            return Step::default();
        }
        lock(&self.pipes).inbound.extend_from_slice(bytes);
        self.pump()
    }

    /// Answers the Tool call out (if any) and runs hyper on.
    pub(crate) fn answer(&mut self, outcome: Outcome) -> Step {
        let reply = lock(&self.pipes).reply.take();
        match reply {
            Some(reply) if self.serving.is_some() => {
                let _ = reply.send(outcome);
                self.pump()
            }
            _ => Step::default(),
        }
    }

    fn pump(&mut self) -> Step {
        let mut step = Step::default();
        let mut cx = Context::from_waker(&self.waker);
        while let Some(serving) = self.serving.as_mut() {
            self.woken.0.store(false, Ordering::Relaxed);
            if serving.as_mut().poll(&mut cx).is_ready() {
                // Closed by `Connection: close`, a refused request or a framing error
                // (hyper has already written its answer).
                self.serving = None;
                step.close = true;
                break;
            }
            if !self.woken.0.load(Ordering::Relaxed) {
                break;
            }
        }
        let mut pipes = lock(&self.pipes);
        step.write = std::mem::take(&mut pipes.outbound);
        step.call = pipes.call.take();
        step
    }
}

fn answer(status: u16, body: Vec<u8>) -> Response<Full<Bytes>> {
    let json = !body.is_empty();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    if json {
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    response
}

/// A refusal that ends the connection (hyper closes after writing it).
fn refuse(status: u16) -> Response<Full<Bytes>> {
    let mut response = answer(status, Vec::new());
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

async fn respond(
    served: Arc<Served>,
    pipes: Shared,
    request: HttpRequest<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let headers = request.headers();
    if headers.contains_key(hyper::header::TRANSFER_ENCODING) {
        return Ok(refuse(411));
    }
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .unwrap_or(0);
    if declared > BODY_LIMIT as u64 {
        return Ok(refuse(413));
    }
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let authorization = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let Ok(body) = Limited::new(request.into_body(), BODY_LIMIT)
        .collect()
        .await
    else {
        return Ok(refuse(400));
    };
    let request = Request {
        method,
        path,
        authorization,
        body: body.to_bytes().to_vec(),
    };
    Ok(match route_sync(&served, &request) {
        Routed::Answer(status, body, allow_post) => {
            let mut response = answer(status, body);
            if allow_post {
                response
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("POST"));
            }
            response
        }
        Routed::Call { id, tool, input } => {
            let (reply, outcome) = oneshot::channel();
            {
                let mut pipes = lock(&pipes);
                pipes.call = Some((tool, input.to_string()));
                pipes.reply = Some(reply);
            }
            // The sender lives in the pipes as long as this future does; a dropped one can
            // only mean the connection is going away, and the answer reads as a failure.
            let outcome = outcome.await.unwrap_or_else(|_| {
                Err(ToolCallError::from_js("Error".into(), String::new(), false))
            });
            answer(200, call_answer(id, outcome))
        }
    })
}
