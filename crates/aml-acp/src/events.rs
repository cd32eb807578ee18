//! What a session reports, in the order it happened. One bounded channel per session carries
//! everything (process facts, updates, turn outcomes) so the observer sees updates before the
//! completion they precede, and a slow observer slows the agent down (the reader stops
//! reading its stdout) instead of growing a queue.

use crate::error::AcpError;

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
        update: String,
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
