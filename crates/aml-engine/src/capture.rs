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
    pub(crate) prompt: String,
    /// Everything else the Agent gathers; `None` while it has none of it (most Agents).
    pub(crate) grants: Option<Box<AgentGrants>>,
    /// The facade answered this Agent from an evaluation journal (position.rs): its span
    /// says so with `journal.replayed`.
    pub(crate) replayed: bool,
    /// The usage the provider reported with its answer (issue 37), validated, or why it was
    /// refused; boxed: most Agents have none.
    pub(crate) usage: Option<Box<Result<crate::usage::Usage, crate::usage::BadUsage>>>,
}

/// What an Agent gathers besides its prompt. Most Agents have none of it, and a plan lives
/// as long as its Agent is in flight, so the six lists sit behind one optional box: 136
/// bytes less per in-flight Agent than six empty `Vec`s inline (docs/HOT-PATH-PERFORMANCE.md).
#[derive(Debug, Default)]
pub struct AgentGrants {
    /// `[runtime system, props.system]`, already trimmed, empty ones dropped.
    pub(crate) base_system: Vec<String>,
    pub(crate) follow_ups: Vec<String>,
    pub(crate) systems: Vec<String>,
    pub(crate) tools: Vec<ToolGrant>,
    pub(crate) mcp: Vec<McpGrant>,
    /// Skill packages registered with this Agent, in completion order.
    pub(crate) skills: Vec<SkillGrant>,
}

impl AgentPlan {
    /// The prompt, trimmed the way `String.prototype.trim` does it.
    pub fn prompt(&self) -> &str {
        crate::js_text::js_trim(&self.prompt)
    }

    /// Base system fragments followed by the `<System>` fragments, joined with newlines.
    pub fn system(&self) -> String {
        let Some(grants) = self.grants.as_deref() else {
            return String::new();
        };
        let mut parts: Vec<&str> = grants.base_system.iter().map(String::as_str).collect();
        parts.extend(grants.systems.iter().map(String::as_str));
        parts.join("\n")
    }

    pub fn turns(&self) -> u64 {
        1 + self.follow_ups().len() as u64
    }

    /// The `<FollowUp>` prompts, in order.
    pub fn follow_ups(&self) -> &[String] {
        self.grants.as_deref().map_or(&[], |g| &g.follow_ups)
    }

    /// The `<System>` fragments, in order (without the base system text).
    pub fn systems(&self) -> &[String] {
        self.grants.as_deref().map_or(&[], |g| &g.systems)
    }

    pub fn tools(&self) -> &[ToolGrant] {
        self.grants.as_deref().map_or(&[], |g| &g.tools)
    }

    pub fn mcp(&self) -> &[McpGrant] {
        self.grants.as_deref().map_or(&[], |g| &g.mcp)
    }

    /// Skill packages registered with this Agent, in completion order.
    pub fn skills(&self) -> &[SkillGrant] {
        self.grants.as_deref().map_or(&[], |g| &g.skills)
    }

    /// The lists, boxed on the first grant.
    pub(crate) fn grants_mut(&mut self) -> &mut AgentGrants {
        self.grants.get_or_insert_with(Box::default)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan lives as long as its Agent is in flight, 200,000 of them in a wide fan-out: its
    /// rarely used lists stay behind one box (they were six inline `Vec`s, 256 bytes a plan).
    #[test]
    fn a_plan_keeps_its_rare_lists_boxed() {
        assert_eq!(std::mem::size_of::<Option<Box<AgentGrants>>>(), 8);
        assert!(
            std::mem::size_of::<AgentPlan>() <= 128,
            "AgentPlan is {} bytes",
            std::mem::size_of::<AgentPlan>()
        );
    }
}
