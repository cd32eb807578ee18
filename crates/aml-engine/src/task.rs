//! A task is one frame stack: the root of an evaluation or one component-local `evaluate()`.
//! Tasks of one domain share limits and the tracer; a nested task starts from the depth,
//! active identities and span of the component that created it.

use std::collections::HashSet;
use std::sync::Arc;

use crate::error::EvalError;
use crate::frame::Frame;
use crate::limits::Limits;
use crate::span_id::SpanId;
use crate::step::{Op, Step};
use crate::trace::{SpanFailure, SpanKind, Tracer};

/// What kind of node the driver found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An ordinary function component (Fragment included).
    Component,
    /// A built-in primitive, by its stable code (the order of `PRIMITIVE_KINDS` in the facade).
    Primitive(u8),
}

#[derive(Debug)]
pub(crate) struct Task {
    frames: Vec<Frame>,
    /// Identities of arrays and nodes on this task's active branch. Cycles are an identity
    /// that is already active on the branch.
    active: HashSet<u32>,
    /// Identities active in the ancestors of a nested task, captured when it was created.
    inherited: Arc<[u32]>,
    base_depth: u64,
    node_depth: u64,
    base_parent: SpanId,
    output: String,
    error: Option<EvalError>,
}

impl Task {
    pub(crate) fn root() -> Task {
        Task::with_base(Arc::from(Vec::new()), 0, SpanId::ROOT)
    }

    fn with_base(inherited: Arc<[u32]>, base_depth: u64, base_parent: SpanId) -> Task {
        Task {
            frames: Vec::new(),
            active: HashSet::new(),
            inherited,
            base_depth,
            node_depth: 0,
            base_parent,
            output: String::new(),
            error: None,
        }
    }

    /// A task created by a component of this task; the component is the top frame.
    pub(crate) fn child(&self) -> Task {
        let mut ids: Vec<u32> = self.inherited.to_vec();
        ids.extend(self.active.iter().copied());
        Task::with_base(Arc::from(ids), self.depth(), self.current_span())
    }

    pub(crate) fn depth(&self) -> u64 {
        self.base_depth + self.node_depth
    }

    /// The span that encloses whatever is evaluated next in this task.
    pub(crate) fn current_span(&self) -> SpanId {
        self.frames
            .iter()
            .rev()
            .find_map(|f| match f {
                Frame::Node { span: Some(s), .. } => Some(s.id),
                _ => None,
            })
            .unwrap_or(self.base_parent)
    }

    fn is_active(&self, identity: u32) -> bool {
        self.active.contains(&identity) || self.inherited.contains(&identity)
    }

    pub(crate) fn text(&mut self, text: &str, tracer: &mut Tracer) -> Step {
        self.output.push_str(text);
        self.advance(tracer)
    }

    pub(crate) fn empty(&mut self, tracer: &mut Tracer) -> Step {
        self.advance(tracer)
    }

    pub(crate) fn array(&mut self, identity: u32, len: u32, tracer: &mut Tracer) -> Step {
        if len == 0 {
            return self.advance(tracer);
        }
        if self.is_active(identity) {
            return self.reject(EvalError::ArrayCycle, tracer);
        }
        self.active.insert(identity);
        self.frames.push(Frame::Array {
            identity,
            remaining: len,
        });
        self.advance(tracer)
    }

    pub(crate) fn node(
        &mut self,
        identity: u32,
        kind: NodeKind,
        name: &str,
        limits: &Limits,
        tracer: &mut Tracer,
    ) -> Step {
        if self.is_active(identity) {
            return self.reject(EvalError::NodeCycle, tracer);
        }
        let depth = self.depth() + 1;
        if !limits.depth_allows(depth) {
            return self.reject(EvalError::MaxDepth(limits.max_depth), tracer);
        }
        let (span, reported, op) = match kind {
            NodeKind::Component => {
                let reported = tracer.enabled();
                let parent = Some(self.current_span());
                let id = tracer.next_trace_id();
                let span =
                    tracer.open(id, parent, SpanKind::Component, name.into(), vec![], vec![]);
                (Some(span), reported, Op::Invoke)
            }
            NodeKind::Primitive(_) => (None, false, Op::Primitive),
        };
        self.active.insert(identity);
        self.node_depth += 1;
        self.frames.push(Frame::Node {
            identity,
            kind,
            span,
            reported,
        });
        self.step(op, tracer)
    }

    pub(crate) fn invalid(&mut self, type_name: &str, tracer: &mut Tracer) -> Step {
        self.reject(EvalError::CannotRender(type_name.into()), tracer)
    }

    pub(crate) fn unknown_element(&mut self, tracer: &mut Tracer) -> Step {
        self.reject(EvalError::UnknownElement, tracer)
    }

    /// Unwinds the whole stack after a failure, closing every open span with the error.
    pub(crate) fn fail(&mut self, failure: &SpanFailure, tracer: &mut Tracer) {
        while let Some(frame) = self.frames.pop() {
            self.active.remove(&frame.identity());
            if let Frame::Node { span, reported, .. } = frame {
                self.node_depth -= 1;
                if let (Some(span), true) = (span, reported) {
                    tracer.close(span, Some(failure), vec![], vec![]);
                }
            }
        }
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

    fn reject(&mut self, error: EvalError, tracer: &mut Tracer) -> Step {
        let failure = SpanFailure {
            error_type: error.js_name().into(),
            message: error.to_string(),
        };
        self.fail(&failure, tracer);
        self.error = Some(error);
        self.step(Op::Error, tracer)
    }

    fn step(&self, op: Op, tracer: &Tracer) -> Step {
        Step {
            op,
            height: self.frames.len() as u32,
            trace_pending: tracer.has_pending(),
        }
    }

    /// A value just completed: pop every frame it completes and find the next request.
    fn advance(&mut self, tracer: &mut Tracer) -> Step {
        loop {
            match self.frames.last_mut() {
                None => return self.step(Op::Done, tracer),
                Some(Frame::Array { remaining, .. }) if *remaining > 0 => {
                    *remaining -= 1;
                    return self.step(Op::Read, tracer);
                }
                Some(_) => {
                    let frame = self.frames.pop().expect("frame checked above");
                    self.active.remove(&frame.identity());
                    if let Frame::Node { span, reported, .. } = frame {
                        self.node_depth -= 1;
                        if let (Some(span), true) = (span, reported) {
                            tracer.close(span, None, vec![], vec![]);
                        }
                    }
                }
            }
        }
    }
}
