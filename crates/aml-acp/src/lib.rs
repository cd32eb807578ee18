//! The ACP (Agent Client Protocol) client engine behind AML's built-in Agents
//! (INVENTORY PA-7, BA-0): newline-delimited JSON-RPC 2.0 over the stdio of an agent process
//! that `aml-process` supervises (own process group, tree kill, reaped).
//!
//! * `lines` — framing with a hard line limit; `wire` — frame classification and the few
//!   ACP shapes AML reads (updates stay raw, forwarded unchanged).
//! * `connection` — reader/writer/stderr tasks, pending requests, permission answers.
//! * `session` — the actor: start-up, turns, cancel, ordered cleanup; all reported as
//!   [`Event`]s through one bounded channel.
//! * `config`, `permission`, `launch` — the documented rules and messages.
//! * `bridge` (over `http`) — the Streamable-HTTP MCP server serving the Agent's JS Tools;
//!   `relay` — the host side of the Sandbox MCP relay that carries it into a guest.
//!
//! No napi here: the binding (`src/acp/session.rs` of the addon) converts events to JSON.

mod bridge;
mod bridge_conn;
mod bridge_loop;
mod config;
mod connection;
mod error;
mod events;
mod launch;
mod lines;
mod permission;
mod relay;
mod session;
mod session_actor;
mod session_config;
mod tail;
mod transport;
mod wire;

pub use bridge::RelayTarget;
pub use bridge_loop::{Feed as BridgeFeed, LoopBridge};
pub use config::{ConfigEntry, ConfigTarget};
pub use error::{signal_name, AcpError, ErrorKind};
pub use events::{Detail, Event, ProcessFact, UpdateDetail};
pub use launch::{
    check_path, create_state_directory, path_problem, write_launch_files, Launch, LaunchFile,
    LaunchFileError, PathProblem,
};
pub use permission::PermissionPolicy;
pub use relay::{Relay, INVALID_READINESS, RELAY_LINE_LIMIT};
pub use session::{Limits, Session, SessionConfig, SessionSpec, PROTOCOL_VERSION};
pub use session_config::{kill_grace, CANCEL_GRACE_VARIABLE, KILL_GRACE_VARIABLE};
pub use transport::{external, ExternalAgent, ExternalExit, ExternalPort, Pipe};
