//! ACP Agents in the binding: sessions, sessions over a Sandbox process, the MCP Tool
//! bridge served on the JS event loop, its registry, and the Sandbox MCP relay.

pub mod bridges;
pub mod external;
pub mod loop_bridge;
pub(crate) mod ports;
pub mod relay;
pub mod session;
