//! Async ports for Rust-native AML providers.
//!
//! The evaluation engine (`aml-engine`) is a synchronous, sans-IO state machine; native
//! providers are not: they run on tokio and wait on agents, sockets and Tools. What they need
//! from their host lives here, napi-free, so a provider crate depends on these traits and is
//! tested with fakes, while the napi binding implements them over JS.

mod scripted;
mod tool;

pub use scripted::{run_script, Script, ScriptReport, ScriptStep};
pub use tool::{ToolCallError, ToolErrorKind, ToolInvoker, ToolRef, ToolSpec};
