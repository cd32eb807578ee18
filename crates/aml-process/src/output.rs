//! Bounded, byte-exact readers for the child's stdout and stderr.
//!
//! Both streams charge one shared [`Budget`] (the `<Script>` contract bounds stdout+stderr
//! together). The read that crosses the limit kills the tree and fails with
//! `OutputLimitExceeded`, and so does every later read on either stream. Bytes are never decoded:
//! non-UTF-8 output is the caller's business.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::unix::pipe;

use crate::control::{Cause, Control};
use crate::error::ProcessError;
use crate::sys;

/// Pipe capacity on Linux; larger reads would only ever be partially filled.
const CHUNK: usize = 64 * 1024;

/// The shared stdout+stderr byte budget of one process.
pub(crate) struct Budget {
    limit: Option<usize>,
    used: AtomicUsize,
    exceeded: AtomicBool,
    control: Arc<Control>,
}

impl Budget {
    pub(crate) fn new(limit: Option<usize>, control: Arc<Control>) -> Self {
        Budget {
            limit,
            used: AtomicUsize::new(0),
            exceeded: AtomicBool::new(false),
            control,
        }
    }

    fn check(&self) -> Result<(), ProcessError> {
        match self.limit {
            Some(limit) if self.exceeded.load(Ordering::Acquire) => {
                Err(ProcessError::OutputLimitExceeded { limit })
            }
            _ => Ok(()),
        }
    }

    fn charge(&self, bytes: usize) -> Result<(), ProcessError> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let total = self
            .used
            .fetch_add(bytes, Ordering::AcqRel)
            .saturating_add(bytes);
        if total > limit {
            self.exceeded.store(true, Ordering::Release);
            self.control.request_kill(Cause::OutputLimit(limit));
        }
        self.check()
    }
}

enum Read {
    Chunk(Vec<u8>),
    Eof,
    Pending,
}

/// One of the child's output pipes.
pub struct OutputStream {
    /// `None` only while [`gather`](Self::gather) holds the descriptor unregistered, or
    /// after a gather was cancelled (the stream then reports its end).
    pipe: Option<pipe::Receiver>,
    budget: Arc<Budget>,
    buffer: Box<[u8]>,
    eof: bool,
}

impl OutputStream {
    pub(crate) fn new(fd: OwnedFd, budget: Arc<Budget>) -> io::Result<Self> {
        Ok(OutputStream {
            pipe: Some(pipe::Receiver::from_owned_fd(fd)?),
            budget,
            buffer: vec![0; CHUNK].into_boxed_slice(),
            eof: false,
        })
    }

    /// The next chunk of output, or `None` at end of stream (every writer closed the pipe).
    /// Cancel-safe: a dropped call consumes nothing.
    pub async fn read_chunk(&mut self) -> Result<Option<Vec<u8>>, ProcessError> {
        loop {
            match self.try_read()? {
                Read::Chunk(chunk) => return Ok(Some(chunk)),
                Read::Eof => return Ok(None),
                Read::Pending => {
                    let Some(pipe) = self.pipe.as_ref() else {
                        return Ok(None);
                    };
                    pipe.readable()
                        .await
                        .map_err(|error| ProcessError::io("waiting for process output", error))?
                }
            }
        }
    }

    /// Lets output gather for `pause` with the pipe taken out of the reactor, so the
    /// writes that arrive meanwhile wake no thread (with the descriptor registered, every
    /// write of a chatty child is an epoll wake-up even when nobody is reading). The next
    /// [`read_chunk`](Self::read_chunk) then gets what gathered, up to a pipe's capacity.
    /// Cancelling it closes the pipe (later reads report the end).
    pub async fn gather(&mut self, pause: std::time::Duration) -> Result<(), ProcessError> {
        let Some(pipe) = self.pipe.take() else {
            return Ok(());
        };
        let fd = pipe
            .into_nonblocking_fd()
            .map_err(|error| ProcessError::io("pausing process output", error))?;
        tokio::time::sleep(pause).await;
        let pipe = pipe::Receiver::from_owned_fd(fd)
            .map_err(|error| ProcessError::io("resuming process output", error))?;
        self.pipe = Some(pipe);
        Ok(())
    }

    /// A chunk that can be read without waiting; `None` at end of stream or when the pipe is
    /// momentarily empty.
    ///
    /// Reads the descriptor directly rather than through the reactor's readiness (see
    /// `sys::read_now`): bytes a dead group left in the pipe must never be reported as absent.
    pub(crate) fn read_available(&mut self) -> Result<Option<Vec<u8>>, ProcessError> {
        let Some(pipe) = self.pipe.as_ref() else {
            return Ok(None);
        };
        let read = |buffer: &mut [u8]| sys::read_now(pipe.as_fd(), buffer);
        match Self::read_with(&mut self.eof, &self.budget, &mut self.buffer, read)? {
            Read::Chunk(chunk) => Ok(Some(chunk)),
            Read::Eof | Read::Pending => Ok(None),
        }
    }

    fn try_read(&mut self) -> Result<Read, ProcessError> {
        let Some(pipe) = self.pipe.as_ref() else {
            return Ok(Read::Eof);
        };
        let read = |buffer: &mut [u8]| pipe.try_read(buffer);
        Self::read_with(&mut self.eof, &self.budget, &mut self.buffer, read)
    }

    fn read_with(
        eof: &mut bool,
        budget: &Budget,
        buffer: &mut [u8],
        mut read: impl FnMut(&mut [u8]) -> io::Result<usize>,
    ) -> Result<Read, ProcessError> {
        budget.check()?;
        if *eof {
            return Ok(Read::Eof);
        }
        loop {
            match read(buffer) {
                Ok(0) => {
                    *eof = true;
                    return Ok(Read::Eof);
                }
                Ok(read) => {
                    budget.charge(read)?;
                    return Ok(Read::Chunk(buffer[..read].to_vec()));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(Read::Pending)
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(ProcessError::io("reading process output", error)),
            }
        }
    }
}
