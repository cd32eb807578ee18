//! One command to completion (`docker exec` without stdin): stdout and stderr collected
//! under one shared byte budget, with a timeout and a cancellation token. On any fault
//! the attach connection is dropped; the command itself may live on inside the container,
//! which is why the Sandbox removes the container on a timeout or cancellation.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::client::{Docker, ExecSpec};
use crate::error::DockerError;
use crate::stream::{Channel, Frames};

#[derive(Clone, Debug, Default)]
pub struct ExecLimits {
    /// stdout + stderr together.
    pub max_output_bytes: u64,
    pub timeout: Option<Duration>,
    pub cancel: Option<CancellationToken>,
}

#[derive(Debug)]
pub struct ExecOutput {
    pub exit_code: i64,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecFault {
    #[error("cancelled")]
    Cancelled,
    #[error("timed out")]
    Timeout,
    #[error("output exceeded {0} bytes")]
    OutputLimit(u64),
    #[error(transparent)]
    Docker(#[from] DockerError),
}

impl ExecFault {
    pub fn kind(&self) -> &'static str {
        match self {
            ExecFault::Cancelled => "cancelled",
            ExecFault::Timeout => "timeout",
            ExecFault::OutputLimit(_) => "output-limit",
            ExecFault::Docker(error) => error.kind(),
        }
    }
}

async fn collect(
    docker: &Docker,
    container: &str,
    spec: &ExecSpec,
    max: u64,
) -> Result<ExecOutput, ExecFault> {
    let exec = docker.exec_create(container, spec, false).await?;
    let mut upgraded = docker.exec_start(&exec).await?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut total: u64 = 0;
    let mut frames = Frames::new(&mut upgraded.reader);
    while let Some((channel, bytes)) = frames.next().await.map_err(DockerError::Io)? {
        total = total.saturating_add(bytes.len() as u64);
        if total > max {
            return Err(ExecFault::OutputLimit(max));
        }
        match channel {
            Channel::Stdout => stdout.extend_from_slice(&bytes),
            Channel::Stderr => stderr.extend_from_slice(&bytes),
        }
    }
    let exit_code = docker.exec_exit_code(&exec).await?;
    Ok(ExecOutput {
        exit_code,
        stdout,
        stderr,
    })
}

/// Runs `spec` in `container`; a non-zero exit is a result, not a fault.
pub async fn run(
    docker: &Docker,
    container: &str,
    spec: &ExecSpec,
    limits: ExecLimits,
) -> Result<ExecOutput, ExecFault> {
    let cancel = limits.cancel.clone().unwrap_or_default();
    let work = collect(docker, container, spec, limits.max_output_bytes);
    let timeout = async {
        match limits.timeout {
            Some(duration) => tokio::time::sleep(duration).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        result = work => result,
        _ = cancel.cancelled() => Err(ExecFault::Cancelled),
        _ = timeout => Err(ExecFault::Timeout),
    }
}
