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
//!
//! Selection precedes execution: when the render task reaches its Agent node, the node is
//! *parked* ([`Op::Park`]) before anything of it runs, and the rest of the render value is
//! walked (components called, trailing text and second Agents rejected). Only when the
//! walk ends with that one Agent is it resumed ([`Op::Resume`]) with the depth, identities
//! and enclosing span it was found with. The spans of its ancestors (the components that
//! returned it) stay open meanwhile and close after it, so a component still owns the Agent
//! span it returned (SPEC §15); later siblings are called before the Agent runs.

use crate::capture::ToolGrant;
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::parked::Parked;
use crate::primitive::NodeKind;
use crate::primitive::Primitive;
use crate::shared::Shared;
use crate::step::{Op, Step};
use crate::task::Task;
use crate::trace::{AttrValue, SpanKind};

/// The name of the runtime-owned Loop state Tool.
pub const STATE_TOOL: &str = "aml_set_state";

fn is_agent(kind: NodeKind) -> bool {
    matches!(kind, NodeKind::Primitive(code) if Primitive::from_code(code) == Some(Primitive::Agent))
}

impl Task {
    /// The op for a node just pushed: a render task parks the Agent it selects.
    pub(crate) fn loop_op(&self, kind: NodeKind, op: Op) -> Op {
        if self.loop_tool.is_some() && op == Op::Primitive && self.selecting() && is_agent(kind) {
            Op::Park
        } else {
            op
        }
    }

    /// Sets the Agent node on top aside (see the module docs) and walks on.
    pub(crate) fn park(&mut self, sh: &mut Shared) -> Step {
        let on_top =
            matches!(self.frames.last(), Some(Frame::Node { kind, .. }) if is_agent(*kind));
        if !on_top || !self.selecting() || self.parked.is_some() {
            return self.reject(
                EvalError::Invariant("AML Loop Agent parked out of lifecycle order"),
                sh,
            );
        }
        let parent = self.current_span();
        let depth = self.node_depth;
        let frame = self.pop_frame();
        self.agents += 1;
        self.parked = Some(Box::new(Parked {
            frame,
            identities: self.frames.iter().map(Frame::identity).collect(),
            depth,
            parent,
            floor: self.frames.len(),
            deferred: Vec::new(),
        }));
        self.advance(sh)
    }

    /// At the end of the render value: resume the parked Agent, or, once it ran, close the
    /// spans of its ancestors. `None` when there is nothing (left) to do.
    pub(crate) fn parked_at_end(&mut self, sh: &mut Shared) -> Option<Op> {
        let parked = self.parked.as_ref()?;
        if parked.frame.is_some() {
            return Some(Op::Resume);
        }
        let parked = self.parked.take().expect("checked");
        self.active.clear();
        self.node_depth = 0;
        parked.close_deferred(None, sh);
        None
    }

    /// Puts the parked Agent back as the only frame, as it was found, and asks the facade
    /// to enter it.
    pub(crate) fn resume(&mut self, sh: &mut Shared) -> Step {
        let ready =
            self.frames.is_empty() && self.parked.as_ref().is_some_and(|p| p.frame.is_some());
        if !ready {
            return self.reject(
                EvalError::Invariant("AML Loop Agent resumed out of lifecycle order"),
                sh,
            );
        }
        let parked = self.parked.as_mut().expect("checked");
        let frame = parked.frame.take().expect("checked");
        self.active.extend(parked.identities.iter().copied());
        self.active.insert(frame.identity());
        self.node_depth = parked.depth;
        self.base_parent = parked.parent;
        self.frames.push(frame);
        self.step(Op::Primitive, sh)
    }

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
        if self.selecting() {
            match primitive {
                // A second Agent is refused before anything of it runs.
                Some(Primitive::Agent) if self.agents >= 1 => {
                    return Some(EvalError::LoopRenderNotOneAgent)
                }
                Some(Primitive::Agent | Primitive::Context) => {}
                _ => return Some(EvalError::LoopRenderNotOneAgent),
            }
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
    /// selected Agent (only a resumed one can be entered outside a capture: `park` counted
    /// it, and `loop_placement` refuses a second one).
    pub(crate) fn select_loop_agent(&mut self) -> Result<Option<ToolGrant>, EvalError> {
        let Some(reference) = self.loop_tool.filter(|_| self.selecting()) else {
            return Ok(None);
        };
        if self.agents != 1 || self.parked.as_ref().is_none_or(|p| p.frame.is_some()) {
            return Err(EvalError::Invariant(
                "AML Loop Agent entered before it was selected",
            ));
        }
        Ok(Some(ToolGrant {
            name: STATE_TOOL.into(),
            reference,
        }))
    }
}

impl Domain {
    /// After [`Op::Park`]: sets the selected Agent on top of render task `id` aside.
    pub fn loop_park(&mut self, id: TaskId) -> Result<Step, EvalError> {
        let (task, sh) = self.parts(id)?;
        Ok(task.park(sh))
    }

    /// After [`Op::Resume`]: puts the parked Agent back; answers [`Op::Primitive`].
    pub fn loop_resume(&mut self, id: TaskId) -> Result<Step, EvalError> {
        let (task, sh) = self.parts(id)?;
        Ok(task.resume(sh))
    }

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
            ("iteration".into(), AttrValue::Number(iteration as f64)),
            ("name".into(), AttrValue::Text(name.into())),
            ("transition".into(), AttrValue::Number(count as f64)),
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
