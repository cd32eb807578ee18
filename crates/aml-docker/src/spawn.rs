//! A long-lived exec with its stdin open: a reader task splits the attach stream into
//! stdout and stderr channels (bounded, so a consumer that stops reading stops the reader
//! and, through the socket, the process — as a pipe would), writes go straight to the
//! connection, and closing stdin half-closes it, which the daemon passes on as EOF.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, watch, Mutex};

use crate::client::{Docker, ExecSpec};
use crate::error::DockerError;
use crate::stream::{Channel, Frames};

/// Frames buffered per output before the reader waits for its consumer.
const CHANNEL_FRAMES: usize = 32;

pub struct SpawnedExec {
    docker: Docker,
    exec: String,
    stdin: Mutex<Option<OwnedWriteHalf>>,
    stdout: Mutex<mpsc::Receiver<Vec<u8>>>,
    stderr: Mutex<mpsc::Receiver<Vec<u8>>>,
    /// `Some(error text)` when the stream broke, `None` at a clean end; unset while running.
    ended: watch::Receiver<Option<Option<String>>>,
}

impl SpawnedExec {
    /// Creates and starts the exec; returns once it runs.
    pub async fn start(
        docker: &Docker,
        container: &str,
        spec: &ExecSpec,
    ) -> Result<Arc<SpawnedExec>, DockerError> {
        let exec = docker.exec_create(container, spec, true).await?;
        let upgraded = docker.exec_start(&exec).await?;
        let (out_tx, out_rx) = mpsc::channel(CHANNEL_FRAMES);
        let (err_tx, err_rx) = mpsc::channel(CHANNEL_FRAMES);
        let (end_tx, end_rx) = watch::channel(None);
        let mut frames = Frames::new(upgraded.reader);
        tokio::spawn(async move {
            let outcome = loop {
                match frames.next().await {
                    Ok(Some((Channel::Stdout, bytes))) => {
                        // A dropped receiver (the stream was cancelled) discards the output.
                        let _ = out_tx.send(bytes).await;
                    }
                    Ok(Some((Channel::Stderr, bytes))) => {
                        let _ = err_tx.send(bytes).await;
                    }
                    Ok(None) => break None,
                    Err(error) => break Some(error.to_string()),
                }
            };
            drop((out_tx, err_tx));
            let _ = end_tx.send(Some(outcome));
        });
        Ok(Arc::new(SpawnedExec {
            docker: docker.clone(),
            exec,
            stdin: Mutex::new(Some(upgraded.writer)),
            stdout: Mutex::new(out_rx),
            stderr: Mutex::new(err_rx),
            ended: end_rx,
        }))
    }

    /// The next chunk of stdout (`stderr = false`) or stderr; `None` at the end.
    pub async fn read(&self, stderr: bool) -> Option<Vec<u8>> {
        let receiver = if stderr { &self.stderr } else { &self.stdout };
        receiver.lock().await.recv().await
    }

    /// Writes to stdin; `Ok(false)` when stdin is already closed.
    pub async fn write(&self, bytes: &[u8]) -> Result<bool, DockerError> {
        let mut stdin = self.stdin.lock().await;
        match stdin.as_mut() {
            Some(writer) => {
                writer.write_all(bytes).await?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Half-closes the connection: the process reads EOF. Repeatable.
    pub async fn close_stdin(&self) {
        if let Some(mut writer) = self.stdin.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }

    /// Waits for the attach stream to end, then asks the daemon for the exit code.
    pub async fn wait(&self) -> Result<i64, DockerError> {
        let mut ended = self.ended.clone();
        let outcome = ended
            .wait_for(Option::is_some)
            .await
            .map_err(|_| DockerError::Protocol("the exec reader stopped".into()))?
            .clone()
            .flatten();
        if let Some(error) = outcome {
            return Err(DockerError::Protocol(format!(
                "the exec stream broke: {error}"
            )));
        }
        self.docker.exec_exit_code(&self.exec).await
    }
}
