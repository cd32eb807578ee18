//! ACP Agents in the binding: sessions, sessions over a Sandbox process, the MCP Tool
//! bridges and the Sandbox MCP relay.

pub(crate) mod bridge_runtime;
pub mod external;
pub mod loop_bridge;
pub mod relay;
pub mod session;
pub mod threaded_bridge;
