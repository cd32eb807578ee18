//! `<Loop>` in the engine (INVENTORY LP-1, RT-1, §2.4). The facade owns the state (schema,
//! snapshots, patches: JS data); the engine owns what is structural or a budget:
//! - the *render task* mode: a Loop's render value must resolve to exactly one `<Agent>`
//!   through components, Fragments and Context Providers; that Agent is granted the
//!   runtime-owned `aml_set_state` Tool;
//! - the Loop-in-structured rule;
//! - the evaluation-wide `maxStateTransitions` budget and the `loop.transition` event.
//!
//! Selection rules apply only *outside* the selected Agent (no capture frame open in the
//! render task): inside it, the Agent's prompt is ordinary AML — child Agents, Tools, text —
//! and child Agents do not inherit the state Tool.

use crate::capture::ToolGrant;
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::primitive::Primitive;
use crate::task::{NodeKind, Task};
use crate::trace::{AttrValue, SpanKind};

/// The name of the runtime-owned Loop state Tool.
pub const STATE_TOOL: &str = "aml_set_state";

impl Task {
    /// A render task outside its selected Agent, where the selection rules apply.
    fn selecting(&self) -> bool {
        self.loop_tool.is_some() && self.captures.is_empty()
    }

    pub(crate) fn array_cycle(&self) -> EvalError {
        if self.selecting() {
            EvalError::LoopRenderArrayCycle
        } else {
            EvalError::ArrayCycle
        }
    }

    pub(crate) fn node_cycle(&self) -> EvalError {
        if self.selecting() {
            EvalError::LoopRenderNodeCycle
        } else {
            EvalError::NodeCycle
        }
    }

    /// Placement of a node entering this task: a `<Loop>` anywhere in a structured task (it
    /// may open several Agent sessions, SPEC §10), or a primitive other than an Agent or a
    /// Context Provider in a render selection.
    pub(crate) fn loop_placement(&self, kind: NodeKind) -> Option<EvalError> {
        let NodeKind::Primitive(code) = kind else {
            return None;
        };
        let primitive = Primitive::from_code(code);
        if self.structured && primitive == Some(Primitive::Loop) {
            return Some(EvalError::StructuredNotOneAgent);
        }
        if self.selecting() && !matches!(primitive, Some(Primitive::Agent | Primitive::Context)) {
            return Some(EvalError::LoopRenderNotOneAgent);
        }
        None
    }

    /// Non-empty text reaching the task's own output: only an Agent's result may.
    pub(crate) fn text_outside_error(&self) -> Option<EvalError> {
        if self.structured {
            Some(EvalError::StructuredTextOutside)
        } else if self.loop_tool.is_some() {
            Some(EvalError::LoopRenderNotOneAgent)
        } else {
            None
        }
    }

    /// At the end of a structured or render task: exactly one Agent must have run.
    pub(crate) fn selection_error(&self) -> Option<EvalError> {
        if self.agents == 1 {
            None
        } else if self.structured {
            Some(EvalError::StructuredNotOneAgent)
        } else if self.loop_tool.is_some() {
            Some(EvalError::LoopRenderNotOneAgent)
        } else {
            None
        }
    }

    /// Called when an Agent is entered: the state Tool grant when it is the render's
    /// selected Agent, an error when it is a second one.
    pub(crate) fn select_loop_agent(&mut self) -> Result<Option<ToolGrant>, EvalError> {
        let Some(reference) = self.loop_tool.filter(|_| self.selecting()) else {
            return Ok(None);
        };
        if self.agents >= 1 {
            return Err(EvalError::LoopRenderNotOneAgent);
        }
        self.agents += 1;
        Ok(Some(ToolGrant {
            name: STATE_TOOL.into(),
            reference,
        }))
    }
}

impl Domain {
    /// Marks a fresh task as the render task of one Loop iteration; `tool` is the facade's
    /// reference of that iteration's `aml_set_state` Tool.
    pub fn set_loop_render(&mut self, id: TaskId, tool: u32) -> Result<(), EvalError> {
        self.parts(id)?.0.loop_tool = Some(tool);
        Ok(())
    }

    /// Reserves one committed state transition for the Loop scope on top of `id`, whose
    /// iteration `iteration` staged a changed state, and emits `loop.transition` on its span.
    /// Returns the evaluation-wide count, or `MaxStateTransitions` when the budget is spent.
    pub fn loop_transition(
        &mut self,
        id: TaskId,
        name: &str,
        iteration: u64,
    ) -> Result<u64, EvalError> {
        let (task, sh) = self.parts(id)?;
        let span = match task.frames.last() {
            Some(Frame::Scope {
                span: Some(span), ..
            }) if span.kind == SpanKind::Loop => span,
            _ => {
                return Err(EvalError::Invariant(
                    "AML Loop transition out of lifecycle order",
                ))
            }
        };
        let max = sh.limits.max_state_transitions;
        if max != 0 && sh.state_transitions >= max {
            return Err(EvalError::MaxStateTransitions(max, name.into(), iteration));
        }
        sh.state_transitions += 1;
        let count = sh.state_transitions;
        let attributes = vec![
            ("iteration".to_string(), AttrValue::Number(iteration as f64)),
            ("name".to_string(), AttrValue::Text(name.into())),
            ("transition".to_string(), AttrValue::Number(count as f64)),
        ];
        let (span_id, parent) = (span.id, span.parent);
        sh.tracer.point(
            span_id,
            parent,
            "loop.transition".into(),
            attributes,
            vec![],
        );
        Ok(count)
    }
}
