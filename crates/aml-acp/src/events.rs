//! What a session reports, in the order it happened. One bounded channel per session carries
//! everything (process facts, updates, turn outcomes) so the observer sees updates before the
//! completion they precede, and a slow observer slows the agent down (the reader stops
//! reading its stdout) instead of growing a queue.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::error::AcpError;

/// How much of each `session/update` the observer wants, read by the reader per update and
/// changed by the observer at any time (a trace listener may come or go mid-session). Less
/// detail means less work per update: `None` sends no update events at all (the turn's text
/// is still gathered), `Metadata` sends them without the raw JSON.
#[derive(Debug, Clone)]
pub struct UpdateDetail(Arc<AtomicU8>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    None = 0,
    Metadata = 1,
    Full = 2,
}

impl Default for UpdateDetail {
    fn default() -> Self {
        UpdateDetail(Arc::new(AtomicU8::new(Detail::Full as u8)))
    }
}

impl UpdateDetail {
    pub fn set(&self, detail: Detail) {
        self.0.store(detail as u8, Ordering::Relaxed);
    }

    pub fn get(&self) -> Detail {
        match self.0.load(Ordering::Relaxed) {
            0 => Detail::None,
            1 => Detail::Metadata,
            _ => Detail::Full,
        }
    }
}

/// A `sandbox.process` fact (observability.mdx, "Process states").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessFact {
    /// `spawn_requested`, `started`, `kill_requested`, `kill_completed`, `exited`, `wait_failed`.
    pub state: &'static str,
    pub execution_id: Option<String>,
    pub exit_code: Option<i32>,
    /// The launched command line (sensitive; on `spawn_requested` and `started`).
    pub command: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Process(ProcessFact),
    /// `session/new` answered: the session is ready for turns.
    Created {
        session_id: String,
    },
    /// One `session/update` notification, `update` exactly as the agent sent it.
    Update {
        session_id: String,
        session_update: String,
        tool_name: Option<String>,
        /// The raw update JSON; `None` when the observer asked for metadata only.
        update: Option<String>,
    },
    /// A `session/prompt` reply: the turn's concatenated message text.
    Completed {
        stop_reason: String,
        usage: Option<String>,
        text: String,
    },
    /// The current step (start-up or a turn) failed.
    Failed(AcpError),
    /// Cleanup finished; the last event of a session.
    Closed {
        session_errors: Vec<String>,
        resource_errors: Vec<String>,
    },
}
