//! Capture frames: the text channels of `<Agent>`, `<System>` and `<FollowUp>`. Text and
//! child results go to the nearest capture on the stack; without one they go to the task's
//! output. An Agent's channel becomes its plan: prompt, follow-ups, system fragments, grants.

use crate::span_id::SpanId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGrant {
    pub name: String,
    /// The facade's handle for the tool object (an index in its per-domain table).
    pub reference: u32,
}

/// How an MCP server was granted: by provider-native name or by a `defineMcpServer()`
/// descriptor with the given transport. Only this kind and the name reach the trace, never
/// the transport configuration (INVENTORY §2.4, §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpKind {
    Named,
    Stdio,
    StreamableHttp,
}

impl McpKind {
    /// The `kind` attribute of `capability.mcp`; also how the facade names the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            McpKind::Named => "named",
            McpKind::Stdio => "stdio",
            McpKind::StreamableHttp => "streamable-http",
        }
    }

    pub fn parse(kind: &str) -> Option<McpKind> {
        match kind {
            "named" => Some(McpKind::Named),
            "stdio" => Some(McpKind::Stdio),
            "streamable-http" => Some(McpKind::StreamableHttp),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpGrant {
    pub name: String,
    pub kind: McpKind,
    /// The facade's handle for the provider-facing entry (an index in its per-domain table).
    pub reference: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanState {
    /// Children are being evaluated.
    Collecting,
    /// Children are done; the facade is checking Sandbox compatibility.
    Handshake,
    /// The plan is complete and validated; the driver runs the provider.
    Ready,
}

#[derive(Debug)]
pub struct AgentPlan {
    pub span_id: SpanId,
    pub parent_span: SpanId,
    pub(crate) state: PlanState,
    pub(crate) has_provider: bool,
    pub(crate) sandboxed: bool,
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    /// `[runtime system, props.system]`, already trimmed, empty ones dropped.
    pub(crate) base_system: Vec<String>,
    pub(crate) prompt: String,
    pub follow_ups: Vec<String>,
    pub systems: Vec<String>,
    pub tools: Vec<ToolGrant>,
    pub mcp: Vec<McpGrant>,
    /// Skill packages registered with this Agent, in completion order.
    pub skills: Vec<SkillGrant>,
    /// The facade answered this Agent from an evaluation journal (position.rs): its span
    /// says so with `journal.replayed`.
    pub(crate) replayed: bool,
}

impl AgentPlan {
    /// The prompt, trimmed the way `String.prototype.trim` does it.
    pub fn prompt(&self) -> &str {
        crate::js_text::js_trim(&self.prompt)
    }

    /// Base system fragments followed by the `<System>` fragments, joined with newlines.
    pub fn system(&self) -> String {
        let mut parts: Vec<&str> = self.base_system.iter().map(String::as_str).collect();
        parts.extend(self.systems.iter().map(String::as_str));
        parts.join("\n")
    }

    pub fn turns(&self) -> u64 {
        1 + self.follow_ups.len() as u64
    }
}

#[derive(Debug)]
pub(crate) enum Capture {
    Agent(Box<AgentPlan>),
    System { buffer: String },
    FollowUp { buffer: String },
}

/// A Skill package registered with the nearest Agent plan. The provider request lists it,
/// and the facade stages it for the provider call only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillGrant {
    /// The package name from its SKILL.md; one Agent cannot stage two packages of one name.
    pub name: String,
    /// The facade's handle for the package (an index in its per-domain table).
    pub reference: u32,
}
