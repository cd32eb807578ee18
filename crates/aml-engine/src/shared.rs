//! State shared by all tasks of one domain and passed to every task operation.

use crate::limits::Limits;
use crate::trace::Tracer;

#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub limits: Limits,
    pub tracer: Tracer,
    /// Provider-backed Agent sessions reserved so far (maxAgentCalls).
    pub agent_calls: u64,
    /// Reported usage of the whole evaluation (issue 37); empty while no provider reported.
    pub usage: crate::usage::Usage,
    /// What `maxTokens` counts so far ([`crate::usage::Usage::counted`] summed).
    pub tokens: u64,
    /// Committed `<Loop>` state transitions so far (maxStateTransitions).
    pub state_transitions: u64,
    /// The runtime allowlist of Tool names; `None` is unrestricted.
    pub allowed_tools: Option<Vec<String>>,
    /// The runtime allowlist of MCP server names; `None` is unrestricted.
    pub allowed_mcp_servers: Option<Vec<String>>,
    /// The runtime `system` option, trimmed.
    pub runtime_system: String,
    /// A `<Workspace>` has been entered in this domain (at most one per evaluation).
    pub workspace_claimed: bool,
}
