//! What the daemon (or the way to it) can answer instead of success.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    /// The socket is missing or refuses connections: the daemon is not running (or not here).
    /// Worded like the Docker CLI, which is what users search for.
    #[error("Cannot connect to the Docker daemon at unix://{}. Is the docker daemon running?", socket.display())]
    Connect { socket: PathBuf, source: io::Error },
    /// A non-success status with the daemon's `{"message": …}` (or the raw body).
    #[error("{message}")]
    Api { status: u16, message: String },
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The daemon answered something this client cannot read.
    #[error("{0}")]
    Protocol(String),
    /// The daemon went silent for longer than the idle deadline (`AML_DOCKER_API_TIMEOUT_MS`).
    #[error("the Docker daemon did not answer {request} within {ms} ms")]
    Timeout { request: String, ms: u128 },
}

impl DockerError {
    /// The HTTP status of an API error (404 for a missing image or container…).
    pub fn status(&self) -> Option<u16> {
        match self {
            DockerError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            DockerError::Connect { .. } => "connect",
            DockerError::Api { .. } => "api",
            DockerError::Io(_) => "io",
            DockerError::Protocol(_) => "protocol",
            DockerError::Timeout { .. } => "timeout",
        }
    }
}
