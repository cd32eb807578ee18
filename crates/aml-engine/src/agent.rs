//! The Agent protocol on a task: entering `<Agent>`, `<System>` and `<FollowUp>` as capture
//! frames, granting Tools and MCP servers, completing channels post-order, and landing an
//! Agent's result in its parent channel (INVENTORY §1.2, §1.4 TL-2, §1.5 MCP-2).

use crate::capture::{AgentGrants, AgentPlan, Capture, McpGrant, McpKind, PlanState, ToolGrant};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::js_text::js_trim;
use crate::primitive::NodeKind;
use crate::primitive::Primitive;
use crate::shared::Shared;
use crate::step::{Op, Step};
use crate::task::Task;
use crate::trace::{AttrValue, SpanKind};

/// Where a primitive on top of the stack would place its content.
pub(crate) enum Target {
    None,
    Agent {
        wrapped: bool,
    },
    System,
    FollowUp,
    /// The private input of a scope (a Script's source, a File's content).
    Text,
}

/// What the facade knows about an Agent when it enters it.
#[derive(Debug, Clone, Default)]
pub struct AgentEntry {
    pub has_provider: bool,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub system: Option<String>,
    /// A Sandbox is active: the plan stops at [`crate::Op::Handshake`] before its budgets.
    pub sandboxed: bool,
}

impl Task {
    /// The nearest capture below the top frame, looking through components, arrays and
    /// transparent primitives; `wrapped` records a lexical wrapper (e.g. `<Sandbox>`) between.
    pub(crate) fn target(&self) -> Target {
        let mut wrapped = false;
        let below_top = self.frames.len().saturating_sub(1);
        for frame in self.frames[..below_top].iter().rev() {
            match frame {
                Frame::Capture { capture, .. } => {
                    return match capture {
                        Capture::Agent(_) => Target::Agent { wrapped },
                        Capture::System { .. } => Target::System,
                        Capture::FollowUp { .. } => Target::FollowUp,
                    }
                }
                Frame::Node {
                    kind: NodeKind::Primitive(code),
                    ..
                } if !Primitive::from_code(*code).is_some_and(Primitive::is_transparent) => {
                    wrapped = true;
                }
                Frame::Scope {
                    capture: Some(_), ..
                } => return Target::Text,
                Frame::Scope { .. } => wrapped = true,
                _ => {}
            }
        }
        Target::None
    }

    pub(crate) fn nearest_plan(&mut self) -> Option<&mut AgentPlan> {
        let index = self.captures.iter().rev().copied().find(|&i| {
            matches!(
                &self.frames[i],
                Frame::Capture {
                    capture: Capture::Agent(_),
                    ..
                }
            )
        })?;
        match &mut self.frames[index] {
            Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            } => Some(plan),
            _ => None,
        }
    }

    /// Replaces the primitive node on top with a capture frame and asks for its children.
    fn open_capture(
        &mut self,
        capture: Capture,
        span_kind: Option<(SpanKind, bool)>,
        sh: &mut Shared,
    ) -> Step {
        let Some(Frame::Node { identity, .. }) = self.frames.last() else {
            return self.reject(
                EvalError::Invariant("AML primitive is not on top of its task"),
                sh,
            );
        };
        let identity = *identity;
        let parent_span = self.current_span();
        let parent = Some(parent_span);
        let span = match span_kind {
            None => None,
            Some((kind, resource)) => {
                let id = if resource {
                    sh.tracer.next_span_id()
                } else {
                    sh.tracer.next_trace_id()
                };
                let attributes = match &capture {
                    Capture::System { .. } => {
                        let index = self.nearest_plan().map_or(0, |p| p.systems().len()) + 1;
                        vec![("index".into(), AttrValue::Number(index as f64))]
                    }
                    _ => vec![],
                };
                let name = match kind {
                    SpanKind::Agent => "Agent",
                    _ => "System",
                };
                Some(
                    sh.tracer
                        .open(id, parent, kind, name.into(), attributes, vec![]),
                )
            }
        };
        let mut capture = capture;
        if let (Capture::Agent(plan), Some(span)) = (&mut capture, &span) {
            plan.span_id = span.id;
            plan.parent_span = parent_span;
        }
        let top = self.frames.len() - 1;
        self.frames[top] = Frame::Capture {
            identity,
            capture,
            span,
        };
        self.captures.push(top);
        self.step(Op::Children, sh)
    }

    pub(crate) fn enter_agent(&mut self, entry: AgentEntry, sh: &mut Shared) -> Step {
        if self.structured {
            if self.agents >= 1 {
                return self.reject(EvalError::StructuredNotOneAgent, sh);
            }
            self.agents += 1;
        }
        // The Agent a `<Loop>` render selects gets the runtime-owned state Tool first, so an
        // authored Tool of that name is a duplicate and the allowlist never sees it.
        let tools: Vec<ToolGrant> = match self.select_loop_agent() {
            Ok(grant) => grant.into_iter().collect(),
            Err(e) => return self.reject(e, sh),
        };
        let mut base_system = Vec::new();
        for part in [Some(sh.runtime_system.as_str()), entry.system.as_deref()]
            .into_iter()
            .flatten()
        {
            let part = js_trim(part);
            if !part.is_empty() {
                base_system.push(part.to_string());
            }
        }
        let plan = AgentPlan {
            span_id: crate::SpanId::ROOT,
            parent_span: crate::SpanId::ROOT,
            state: PlanState::Collecting,
            has_provider: entry.has_provider,
            sandboxed: entry.sandboxed,
            provider: entry.provider,
            model: entry.model,
            prompt: String::new(),
            grants: (!base_system.is_empty() || !tools.is_empty()).then(|| {
                Box::new(AgentGrants {
                    base_system,
                    tools,
                    ..AgentGrants::default()
                })
            }),
            replayed: false,
            usage: None,
        };
        self.open_capture(
            Capture::Agent(Box::new(plan)),
            Some((SpanKind::Agent, true)),
            sh,
        )
    }

    pub(crate) fn enter_system(&mut self, sh: &mut Shared) -> Step {
        match self.target() {
            Target::Agent { .. } => {}
            Target::System => return self.reject(EvalError::NestedDescriptor("System"), sh),
            Target::None | Target::FollowUp | Target::Text => {
                return self.reject(EvalError::OnlyInsideAgent("System"), sh)
            }
        }
        let capture = Capture::System {
            buffer: String::new(),
        };
        self.open_capture(capture, Some((SpanKind::System, false)), sh)
    }

    pub(crate) fn enter_follow_up(&mut self, sh: &mut Shared) -> Step {
        match self.target() {
            Target::Agent { wrapped: false } => {}
            Target::Agent { wrapped: true } => {
                return self.reject(EvalError::FollowUpNotImmediate, sh)
            }
            Target::FollowUp => return self.reject(EvalError::NestedDescriptor("FollowUp"), sh),
            Target::None | Target::System | Target::Text => {
                return self.reject(EvalError::OnlyInsideAgent("FollowUp"), sh)
            }
        }
        let capture = Capture::FollowUp {
            buffer: String::new(),
        };
        self.open_capture(capture, None, sh)
    }

    /// Placement of a capability grant (`<Tool>`, `<Mcp>`): it belongs to the nearest Agent
    /// plan, never to a FollowUp or System text channel (INVENTORY AG-2, AG-3).
    fn capability_placement(&self, label: &'static str) -> Result<(), EvalError> {
        match self.target() {
            Target::Agent { .. } => Ok(()),
            Target::FollowUp => Err(EvalError::InvalidInsideFollowUp(label)),
            Target::None | Target::System | Target::Text => Err(EvalError::OnlyInsideAgent(label)),
        }
    }

    /// Adds a Tool grant to the nearest Agent plan. The Tool node itself produces no text.
    pub(crate) fn grant_tool(&mut self, name: &str, reference: u32, sh: &mut Shared) -> Step {
        if let Err(e) = self.capability_placement("Tool") {
            return self.reject(e, sh);
        }
        if !allowed(&sh.allowed_tools, name) {
            return self.reject(EvalError::ToolNotAllowed(name.into()), sh);
        }
        let plan = self.nearest_plan().expect("placement found an Agent plan");
        if plan.tools().iter().any(|t| t.name == name) {
            return self.reject(EvalError::DuplicateTool(name.into()), sh);
        }
        plan.grants_mut().tools.push(ToolGrant {
            name: name.into(),
            reference,
        });
        self.pop_frame();
        self.advance(sh)
    }

    /// Adds an MCP grant to the nearest Agent plan, in the same order of checks as Tools
    /// (placement, allowlist, duplicates). Named and configured servers share one namespace.
    pub(crate) fn grant_mcp(
        &mut self,
        name: &str,
        kind: McpKind,
        reference: u32,
        sh: &mut Shared,
    ) -> Step {
        if let Err(e) = self.capability_placement("Mcp") {
            return self.reject(e, sh);
        }
        if !allowed(&sh.allowed_mcp_servers, name) {
            return self.reject(EvalError::McpServerNotAllowed(name.into()), sh);
        }
        let plan = self.nearest_plan().expect("placement found an Agent plan");
        if plan.mcp().iter().any(|m| m.name == name) {
            return self.reject(EvalError::DuplicateMcpServer(name.into()), sh);
        }
        plan.grants_mut().mcp.push(McpGrant {
            name: name.into(),
            kind,
            reference,
        });
        self.pop_frame();
        self.advance(sh)
    }
}

/// A runtime allowlist admits `name`; `None` is unrestricted.
fn allowed(list: &Option<Vec<String>>, name: &str) -> bool {
    list.as_ref()
        .is_none_or(|names| names.iter().any(|n| n == name))
}
