//! The listener and its connections (hyper's HTTP/1 server on the caller's tokio runtime).

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::{State, StudioConfig};
use crate::routes::handle;

/// A running studio: its port, and `close()` to stop accepting, end its connections and
/// stop its re-runs.
pub struct Studio {
    pub port: u16,
    stop: watch::Sender<bool>,
    stopped: watch::Receiver<bool>,
    reruns: watch::Receiver<usize>,
}

impl Studio {
    /// Stops the server (idempotent); open connections end after their current request.
    pub fn close(&self) {
        let _ = self.stop.send(true);
    }

    /// Resolves once the server was closed and the re-runs it started have ended.
    pub async fn closed(&self) {
        let mut stopped = self.stopped.clone();
        let _ = stopped.wait_for(|stopped| *stopped).await;
        let mut reruns = self.reruns.clone();
        let _ = reruns.wait_for(|running| *running == 0).await;
    }
}

/// Binds 127.0.0.1:`config.port` and serves on the current tokio runtime.
pub async fn start(config: StudioConfig) -> std::io::Result<Studio> {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, config.port))).await?;
    let port = listener.local_addr()?.port();
    let (stop, stopping) = watch::channel(false);
    let stopped = stop.subscribe();
    let reruns = crate::rerun::Reruns::new(stopping.clone());
    let running = reruns.running();
    let state = Arc::new(State {
        config,
        port,
        reruns,
    });
    tokio::spawn(async move {
        loop {
            let mut waiting = stopping.clone();
            let stop = async move {
                let _ = waiting.wait_for(|stop| *stop).await;
            };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop => break,
            };
            let Ok((stream, _)) = accepted else { continue };
            let state = state.clone();
            let mut closing = stopping.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(&state, request).await) }
                });
                let connection =
                    http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                let mut connection = std::pin::pin!(connection);
                let closing = async move {
                    let _ = closing.wait_for(|stop| *stop).await;
                };
                let finished = tokio::select! {
                    _ = connection.as_mut() => true,
                    () = closing => false,
                };
                if !finished {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            });
        }
    });
    Ok(Studio {
        port,
        stop,
        stopped,
        reruns: running,
    })
}
