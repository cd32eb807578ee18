//! What one ACP session is started with: what it asks of the agent ([`SessionSpec`]), its
//! bounds ([`Limits`], documented defaults where there are any) and the launch
//! ([`SessionConfig`]). The actor that runs it is `session.rs`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::config::ConfigEntry;
use crate::events::UpdateDetail;
use crate::launch::Launch;
use crate::permission::PermissionPolicy;

/// What the session asks of the agent.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// The `cwd` of `session/new` (a guest path in a Sandbox).
    pub cwd: String,
    /// ACP `McpServer` descriptors for `session/new`.
    pub mcp_servers: Vec<Value>,
    pub authentication_method_id: Option<String>,
    pub configuration: Vec<ConfigEntry>,
    pub permission_policy: PermissionPolicy,
    /// How much of each update to report (full unless the observer says otherwise).
    pub detail: UpdateDetail,
}

/// Bounds of one session. The defaults are the documented ones where there are any.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest accepted JSON-RPC line.
    pub line: usize,
    /// Bytes of stderr kept for error messages (BA-0: the last 16 KiB).
    pub stderr_tail: usize,
    /// Longest response text of one turn.
    pub text: usize,
    /// Events buffered before the agent's stdout stops being read.
    pub events: usize,
    /// How long a turn may run on after `session/cancel` before it is given up.
    pub cancel_grace: Duration,
    /// SIGTERM → SIGKILL grace of the tree kill.
    pub kill_grace: Duration,
    /// How long to wait for buffered output after the process exited.
    pub exit_drain: Duration,
    /// How long each start-up request may go unanswered (an agent that never answers
    /// `initialize` would otherwise hang a run without a deadline). Turns have no such
    /// bound: they take as long as the model does, and the caller's signal ends them.
    pub startup_request: Duration,
}

/// How long an agent may take to answer a `session/cancel` before it is stopped.
pub const CANCEL_GRACE_VARIABLE: &str = "AML_ACP_CANCEL_GRACE_MS";
/// How long an agent (or a Sandbox relay) may take to exit after SIGTERM before SIGKILL.
pub const KILL_GRACE_VARIABLE: &str = "AML_ACP_KILL_GRACE_MS";

/// The kill grace of an agent process: `AML_ACP_KILL_GRACE_MS`, else the process default.
/// Read at each use, so a setting made before a session starts applies to it.
pub fn kill_grace() -> Duration {
    aml_text::env_millis(KILL_GRACE_VARIABLE).unwrap_or(aml_process::DEFAULT_GRACE)
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            line: 8 * 1024 * 1024,
            stderr_tail: 16 * 1024,
            text: 16 * 1024 * 1024,
            events: 1024,
            // Operators (and the suites, which stop agents many times) may shorten or lengthen
            // how long an agent is given to honour a cancel and to exit after SIGTERM.
            cancel_grace: aml_text::env_millis(CANCEL_GRACE_VARIABLE)
                .unwrap_or(Duration::from_secs(2)),
            kill_grace: kill_grace(),
            exit_drain: Duration::from_secs(1),
            startup_request: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub launch: Launch,
    pub session: SessionSpec,
    pub limits: Limits,
    /// Removed (recursively) after the process is gone.
    pub state_directory: Option<PathBuf>,
}
