//! Failures as data, with the exact texts of the contract (INVENTORY BA-0) where it gives one.
//! The facade turns each into a JS `Error` with `message`; `kind` lets it choose a class or
//! add a profile's install hint (`Spawn`).

use aml_process::ExitStatus;

/// What went wrong, coarsely, for the facade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The agent process could not be started; `code` is the errno name (`ENOENT`, …).
    Spawn,
    /// The agent broke the protocol (an oversized line, a reply of the wrong shape, EOF).
    Protocol,
    /// The agent process exited while we waited for it.
    Exited,
    /// Waiting for the agent process failed (its launcher could not observe it), so whether
    /// and how it exited is unknown. For a Sandbox process the facade rethrows the launcher's
    /// own `wait()` rejection instead of this message.
    Wait,
    /// The agent answered a request with a JSON-RPC error.
    Agent,
    /// The agent lacks something the session needs (MCP transport, configuration).
    Capability,
    /// The session was closed or its turn given up after `session/cancel`.
    Cancelled,
    /// A start-up request (`initialize`, `authenticate`, `session/new`,
    /// `session/set_config_option`) got no answer within [`crate::Limits::startup_request`].
    Timeout,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AcpError {
    pub kind: ErrorKind,
    pub message: String,
    /// The OS error code name for `Spawn`.
    pub code: Option<String>,
}

impl AcpError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        AcpError {
            kind,
            message: message.into(),
            code: None,
        }
    }

    pub fn protocol(message: impl Into<String>) -> Self {
        AcpError::new(ErrorKind::Protocol, message)
    }

    /// A start-up request that got no answer in time.
    pub fn unanswered(method: &str, after: std::time::Duration) -> Self {
        AcpError::new(
            ErrorKind::Timeout,
            format!(
                "ACP Agent did not answer {method} within {} ms",
                after.as_millis()
            ),
        )
    }

    pub fn invalid_reply(method: &str) -> Self {
        AcpError::protocol(format!("ACP Agent returned an invalid {method} response"))
    }

    /// The process-exit race of a turn (`phase` = "during a turn") or of session start-up.
    pub fn exited(status: ExitStatus, phase: &str, stderr_tail: &str) -> Self {
        let how = match status {
            ExitStatus::Exited(code) => format!("with code {code}"),
            ExitStatus::Signaled(signal) => format!("from signal {}", signal_name(signal)),
        };
        let tail = if stderr_tail.is_empty() {
            String::new()
        } else {
            format!(": {stderr_tail}")
        };
        AcpError::new(
            ErrorKind::Exited,
            format!("ACP Agent process exited {how} {phase}{tail}"),
        )
    }
}

/// Node's names for the signals an agent can die from.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("{signal}"),
    };
    name.to_owned()
}
