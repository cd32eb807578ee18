//! The writable end of the child's stdin. Closing it (or dropping it) delivers EOF to the child.

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use crate::error::ProcessError;

/// The child's stdin.
pub struct ProcessStdin {
    pipe: Option<pipe::Sender>,
}

impl ProcessStdin {
    pub(crate) fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(ProcessStdin {
            pipe: Some(pipe::Sender::from_owned_fd(fd)?),
        })
    }

    /// Writes all of `data`. Fails with `StdinClosed` after [`close`](Self::close), and with an
    /// `Io` error (`BrokenPipe`) when the child no longer reads its stdin.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), ProcessError> {
        let pipe = self.pipe.as_mut().ok_or(ProcessError::StdinClosed)?;
        pipe.write_all(data)
            .await
            .map_err(|error| ProcessError::io("writing process stdin", error))
    }

    /// Closes our end so the child reads EOF. Idempotent.
    pub fn close(&mut self) {
        self.pipe = None;
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.pipe.is_none()
    }
}
