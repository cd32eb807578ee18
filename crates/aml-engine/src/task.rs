//! A task is one frame stack: the root of an evaluation or one component-local `evaluate()`.
//! Tasks of one domain share limits and the tracer; a nested task starts from the depth,
//! active identities and span of the component that created it.

use std::sync::Arc;

use crate::capture::{Capture, PlanState};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::identity::{ActiveSet, Identity};
use crate::primitive::kind_adds_depth;
pub use crate::primitive::NodeKind;
use crate::shared::Shared;
use crate::span_id::SpanId;
use crate::step::{Op, Step};
use crate::trace::{SpanFailure, SpanKind};

/// A task's id in its domain (ids are reused once a task is gone).
pub type TaskId = u32;

#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) frames: Vec<Frame>,
    /// Indices in `frames` of the capture frames, innermost last: where text goes.
    pub(crate) captures: Vec<usize>,
    /// Identities of arrays and nodes on this task's active branch. Cycles are an identity
    /// that is already active on the branch.
    pub(crate) active: ActiveSet,
    /// Identities active in the ancestors of a nested task, captured when it was created.
    inherited: Arc<[Identity]>,
    /// The identities this task's children inherit, with the `active` generation they were
    /// taken at: siblings created on an unchanged branch (a fan-out) share one list.
    for_children: Option<(u32, Arc<[Identity]>)>,
    base_depth: u64,
    pub(crate) node_depth: u64,
    pub(crate) base_parent: SpanId,
    output: String,
    error: Option<EvalError>,
    /// Structured evaluation: exactly one Agent and no text outside it.
    pub(crate) structured: bool,
    pub(crate) agents: u32,
    /// A `<Loop>` render task: the facade's reference of the iteration's `aml_set_state`
    /// Tool, granted to the one selected Agent (loop_render.rs).
    pub(crate) loop_tool: Option<u32>,
    /// This task's values land in the root text channel with no scope or Agent around them:
    /// the root task, or a nested task created where its parent was itself top-level
    /// (workspace.rs).
    pub(crate) top_level: bool,
    /// The Agent a render task selected, while the rest of its value is checked.
    pub(crate) parked: Option<Box<crate::parked::Parked>>,
}

impl Task {
    pub(crate) fn root() -> Task {
        Task::with_base(Arc::from(Vec::new()), 0, SpanId::ROOT)
    }

    fn with_base(inherited: Arc<[Identity]>, base_depth: u64, base_parent: SpanId) -> Task {
        Task {
            frames: Vec::new(),
            captures: Vec::new(),
            active: ActiveSet::default(),
            inherited,
            for_children: None,
            base_depth,
            node_depth: 0,
            base_parent,
            output: String::new(),
            error: None,
            structured: false,
            agents: 0,
            loop_tool: None,
            top_level: true,
            parked: None,
        }
    }

    /// A task created by a component of this task; the component is the top frame.
    pub(crate) fn child(&mut self) -> Task {
        let generation = self.active.generation();
        let ids = match &self.for_children {
            Some((taken, ids)) if *taken == generation => Arc::clone(ids),
            _ => {
                let mut ids: Vec<Identity> = self.inherited.to_vec();
                ids.extend(self.active.iter().copied());
                let ids: Arc<[Identity]> = Arc::from(ids);
                self.for_children = Some((generation, Arc::clone(&ids)));
                ids
            }
        };
        let mut child = Task::with_base(ids, self.depth(), self.current_span());
        child.top_level = self.top_level && self.frames_are_top_level(self.frames.len());
        // Most nested tasks are one Agent (its node and its capture: two frames). Room for
        // exactly those, instead of a first growth to four, is 240 bytes less per task in
        // flight (a 200,000-Agent fan-out holds them all at once); deeper tasks grow as usual.
        child.frames = Vec::with_capacity(2);
        child
    }

    pub(crate) fn depth(&self) -> u64 {
        self.base_depth + self.node_depth
    }

    /// The span that encloses whatever is evaluated next in this task.
    pub(crate) fn current_span(&self) -> SpanId {
        self.frames
            .iter()
            .rev()
            .find_map(Frame::span_id)
            .unwrap_or(self.base_parent)
    }

    fn is_active(&self, identity: Identity) -> bool {
        self.active.contains(&identity) || self.inherited.contains(&identity)
    }

    pub(crate) fn text(&mut self, text: &str, sh: &mut Shared) -> Step {
        match self.append(text, false) {
            Ok(()) => self.advance(sh),
            Err(e) => self.reject(e, sh),
        }
    }

    pub(crate) fn empty(&mut self, sh: &mut Shared) -> Step {
        self.advance(sh)
    }

    pub(crate) fn array(&mut self, identity: Identity, len: u32, sh: &mut Shared) -> Step {
        if len == 0 {
            return self.advance(sh);
        }
        if self.is_active(identity) {
            return self.reject(self.array_cycle(), sh);
        }
        self.active.insert(identity);
        self.frames.push(Frame::Array {
            identity,
            remaining: len,
            len,
        });
        self.advance(sh)
    }

    pub(crate) fn node(
        &mut self,
        identity: Identity,
        kind: NodeKind,
        name: &str,
        sh: &mut Shared,
    ) -> Step {
        if self.is_active(identity) {
            return self.reject(self.node_cycle(), sh);
        }
        let counted = kind_adds_depth(kind);
        if counted && !sh.limits.depth_allows(self.depth() + 1) {
            return self.reject(EvalError::MaxDepth(sh.limits.max_depth), sh);
        }
        if let Some(error) = self.loop_placement(kind) {
            return self.reject(error, sh);
        }
        let (span, op) = match kind {
            NodeKind::Component => {
                let parent = Some(self.current_span());
                let id = sh.tracer.next_trace_id();
                let span = sh.tracer.open(
                    id,
                    parent,
                    SpanKind::Component,
                    name.to_string().into(),
                    vec![],
                    vec![],
                );
                (Some(span), Op::Invoke)
            }
            NodeKind::Primitive(_) => (None, Op::Primitive),
        };
        self.active.insert(identity);
        if counted {
            self.node_depth += 1;
        }
        self.frames.push(Frame::Node {
            identity,
            kind,
            span,
        });
        let op = self.loop_op(kind, op);
        self.step(op, sh)
    }

    /// The primitive on top is a transparent wrapper (a Context Provider): feed its children
    /// into the current channel.
    pub(crate) fn enter_transparent(&mut self, sh: &mut Shared) -> Step {
        self.step(Op::Children, sh)
    }

    pub(crate) fn invalid(&mut self, type_name: &str, sh: &mut Shared) -> Step {
        self.reject(EvalError::CannotRender(type_name.into()), sh)
    }

    pub(crate) fn unknown_element(&mut self, sh: &mut Shared) -> Step {
        self.reject(EvalError::UnknownElement, sh)
    }

    /// Unwinds the whole stack after a failure, closing every open span with the error.
    pub(crate) fn fail(&mut self, failure: &SpanFailure, sh: &mut Shared) {
        let mut parked = self.parked.take();
        loop {
            // A parked Agent's ancestor spans close once the frames above them have.
            if parked
                .as_ref()
                .is_some_and(|p| self.frames.len() <= p.floor)
            {
                parked
                    .take()
                    .expect("checked")
                    .close_deferred(Some(failure), sh);
            }
            let Some(frame) = self.pop_frame() else { break };
            if let Frame::Node { span, .. }
            | Frame::Capture { span, .. }
            | Frame::Scope { span, .. } = frame
            {
                if let Some(span) = span {
                    sh.tracer.close(span, Some(failure), vec![], vec![]);
                }
            }
        }
        if let Some(parked) = parked {
            parked.close_deferred(Some(failure), sh);
        }
    }

    /// Pops the top frame, keeping the active set, depth and capture index in step.
    pub(crate) fn pop_frame(&mut self) -> Option<Frame> {
        let frame = self.frames.pop()?;
        self.active.remove(&frame.identity());
        if frame.adds_depth() {
            self.node_depth -= 1;
        }
        if matches!(
            frame,
            Frame::Capture { .. }
                | Frame::Scope {
                    capture: Some(_),
                    ..
                }
        ) {
            self.captures.pop();
        }
        Some(frame)
    }

    pub(crate) fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }

    pub(crate) fn take_error(&mut self) -> Option<EvalError> {
        self.error.take()
    }

    pub(crate) fn kind_on_top(&self) -> Option<NodeKind> {
        match self.frames.last() {
            Some(Frame::Node { kind, .. }) => Some(*kind),
            _ => None,
        }
    }

    /// Appends text to the innermost channel. `agent_result` marks an Agent's own result
    /// landing in its parent channel, which is never "text outside the Agent".
    pub(crate) fn append(&mut self, text: &str, agent_result: bool) -> Result<(), EvalError> {
        let Some(&index) = self.captures.last() else {
            if !agent_result && !text.is_empty() {
                if let Some(error) = self.text_outside_error() {
                    return Err(error);
                }
            }
            self.output.push_str(text);
            return Ok(());
        };
        match &mut self.frames[index] {
            Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            } => {
                if !plan.follow_ups().is_empty() && !crate::js_text::js_trim(text).is_empty() {
                    return Err(EvalError::TextAfterFollowUp);
                }
                plan.prompt.push_str(text);
            }
            Frame::Capture {
                capture: Capture::System { buffer } | Capture::FollowUp { buffer },
                ..
            } => buffer.push_str(text),
            Frame::Scope {
                capture: Some(buffer),
                ..
            } => buffer.push_str(text),
            _ => return Err(EvalError::Invariant("AML capture index is out of step")),
        }
        Ok(())
    }

    /// Records an engine-detected error. The frames stay: the driver must first complete the
    /// scopes on the stack (release a Sandbox…) so that spans close after cleanup, then
    /// unwind with `take_error` or `fail`.
    pub(crate) fn reject(&mut self, error: EvalError, sh: &mut Shared) -> Step {
        self.error = Some(error);
        self.step(Op::Error, sh)
    }

    pub(crate) fn error(&self) -> Option<&EvalError> {
        self.error.as_ref()
    }

    pub(crate) fn step(&self, op: Op, sh: &Shared) -> Step {
        Step {
            op,
            height: self.frames.len() as u32,
            trace_pending: sh.tracer.has_pending(),
        }
    }

    /// A value just completed: pop every frame it completes and find the next request.
    pub(crate) fn advance(&mut self, sh: &mut Shared) -> Step {
        loop {
            match self.frames.last_mut() {
                None => {
                    if let Some(op) = self.parked_at_end(sh) {
                        return self.step(op, sh);
                    }
                    if let Some(error) = self.selection_error() {
                        return self.reject(error, sh);
                    }
                    return self.step(Op::Done, sh);
                }
                Some(Frame::Array { remaining, .. }) if *remaining > 0 => {
                    *remaining -= 1;
                    return self.step(Op::Read, sh);
                }
                Some(Frame::Scope { .. }) => return self.step(Op::Complete, sh),
                Some(Frame::Capture { capture, .. }) => {
                    if let Capture::Agent(plan) = capture {
                        if plan.state != PlanState::Collecting {
                            return self.reject(
                                EvalError::Invariant("AML Agent completed out of lifecycle order"),
                                sh,
                            );
                        }
                    }
                    match self.complete_capture(sh) {
                        Ok(Some(op)) => return self.step(op, sh),
                        Ok(None) => {}
                        Err(e) => return self.reject(e, sh),
                    }
                }
                Some(_) => {
                    let span = match self.pop_frame() {
                        Some(Frame::Node {
                            span: Some(span), ..
                        }) => Some(span),
                        _ => None,
                    };
                    // An ancestor of a parked Agent keeps its span open until the Agent ran.
                    let span = match &mut self.parked {
                        None => span,
                        Some(parked) => parked.popped(self.frames.len(), span),
                    };
                    if let Some(span) = span {
                        sh.tracer.close(span, None, vec![], vec![]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_on_an_unchanged_branch_share_their_inherited_identities() {
        let mut parent = Task::root();
        parent.active.insert(11);
        let (a, b) = (parent.child(), parent.child());
        assert!(Arc::ptr_eq(&a.inherited, &b.inherited));
        assert_eq!(&*a.inherited, &[11]);
        // The branch changed: the next child sees the new identity, in its own list.
        parent.active.insert(12);
        let c = parent.child();
        assert!(!Arc::ptr_eq(&a.inherited, &c.inherited));
        let mut ids = c.inherited.to_vec();
        ids.sort_unstable();
        assert_eq!(ids, [11, 12]);
        parent.active.remove(&12);
        assert_eq!(&*parent.child().inherited, &[11]);
        // A grandchild inherits its parent's inherited identities and its active ones.
        let mut child = parent.child();
        child.active.insert(21);
        let mut ids = child.child().inherited.to_vec();
        ids.sort_unstable();
        assert_eq!(ids, [11, 21]);
    }
}
