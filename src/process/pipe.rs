//! One end of a child's stdio pipe as the JS Web streams see it: operations are serialised by
//! an async mutex (a stream never overlaps its own `pull`s or `write`s), and a close signal
//! interrupts the one in flight, because a stream's `cancel`/`abort` may arrive while its
//! `pull`/`write` is still pending on a child that never writes or reads.

use aml_process::{OutputStream, ProcessError, ProcessStdin};
use tokio::sync::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// One pipe end; see the module docs.
pub(crate) struct Pipe<T> {
    slot: Mutex<Option<T>>,
    closed: CancellationToken,
}

impl<T> Pipe<T> {
    pub(crate) fn new(value: Option<T>) -> Self {
        Pipe {
            slot: Mutex::new(value),
            closed: CancellationToken::new(),
        }
    }

    pub(crate) fn close(&self) {
        self.closed.cancel();
        // Uncontended unless an operation is in flight; that one drops the end itself.
        if let Ok(mut slot) = self.slot.try_lock() {
            *slot = None;
        }
    }

    /// The open end, locked; `None` once closed.
    async fn open(&self) -> Option<MutexGuard<'_, Option<T>>> {
        let slot = tokio::select! {
            slot = self.slot.lock() => slot,
            () = self.closed.cancelled() => return None,
        };
        slot.is_some().then_some(slot)
    }
}

impl Pipe<OutputStream> {
    pub(crate) async fn read(&self) -> std::result::Result<Option<Vec<u8>>, ProcessError> {
        let Some(mut slot) = self.open().await else {
            return Ok(None);
        };
        let Some(out) = slot.as_mut() else {
            return Ok(None);
        };
        tokio::select! {
            biased;
            () = self.closed.cancelled() => {
                *slot = None;
                Ok(None)
            }
            // Cancel-safe: a read dropped here consumes nothing.
            chunk = out.read_chunk() => chunk,
        }
    }
}

impl Pipe<ProcessStdin> {
    pub(crate) async fn write(&self, bytes: &[u8]) -> std::result::Result<(), ProcessError> {
        let Some(mut slot) = self.open().await else {
            return Err(ProcessError::StdinClosed);
        };
        let Some(stdin) = slot.as_mut() else {
            return Err(ProcessError::StdinClosed);
        };
        tokio::select! {
            biased;
            () = self.closed.cancelled() => {
                *slot = None;
                Err(ProcessError::StdinClosed)
            }
            written = stdin.write_all(bytes) => written,
        }
    }
}
