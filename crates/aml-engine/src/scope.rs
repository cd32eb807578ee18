//! Scope frames: resources and actions around a subtree (Sandbox, Workspace, Script, File…).
//! Entering one turns the primitive on top into a scope with its span; when its subtree is
//! done the machine stops with `Op::Complete` so the driver can do the scope's work; then
//! `scope_done` pops it, closes the span and puts any result text in the parent channel.

use crate::error::EvalError;
use crate::frame::Frame;
use crate::shared::Shared;
use crate::step::{Op, Step};
use crate::task::Task;
use crate::trace::{Attributes, SpanKind};

/// How a scope is entered.
#[derive(Debug, Clone)]
pub struct ScopeEntry {
    pub kind: SpanKind,
    pub name: String,
    /// `span-N` (resources and actions) instead of `trace-N`.
    pub resource: bool,
    pub attributes: Attributes,
    pub sensitive: Attributes,
    /// The children's text is the scope's private input, not channel output.
    pub capture: bool,
}

impl Task {
    pub(crate) fn enter_scope(&mut self, entry: ScopeEntry, sh: &mut Shared) -> Step {
        let Some(Frame::Node { identity, .. }) = self.frames.last() else {
            return self.reject(
                EvalError::Invariant("AML primitive is not on top of its task"),
                sh,
            );
        };
        let identity = *identity;
        let parent = Some(self.current_span());
        let id = if entry.resource {
            sh.tracer.next_span_id()
        } else {
            sh.tracer.next_trace_id()
        };
        let span = sh.tracer.open(
            id,
            parent,
            entry.kind,
            entry.name.into(),
            entry.attributes,
            entry.sensitive,
        );
        let top = self.frames.len() - 1;
        self.frames[top] = Frame::Scope {
            identity,
            span: Some(span),
            capture: entry.capture.then(String::new),
        };
        if entry.capture {
            self.captures.push(top);
        }
        self.step(Op::Children, sh)
    }

    /// The scope on top's span id and captured input (after `Op::Complete`).
    pub(crate) fn scope_input(&self) -> Result<(String, Option<&str>), EvalError> {
        match self.frames.last() {
            Some(Frame::Scope { span, capture, .. }) => Ok((
                span.as_ref().map(|s| s.id.to_string()).unwrap_or_default(),
                capture.as_deref(),
            )),
            _ => Err(EvalError::Invariant(
                "AML scope completed out of lifecycle order",
            )),
        }
    }

    /// The driver completed the scope on top: close its span and append `output`.
    pub(crate) fn scope_done(
        &mut self,
        output: &str,
        attributes: Attributes,
        sensitive: Attributes,
        sh: &mut Shared,
    ) -> Step {
        if !matches!(self.frames.last(), Some(Frame::Scope { .. })) {
            return self.reject(
                EvalError::Invariant("AML scope completed out of lifecycle order"),
                sh,
            );
        }
        if let Some(Frame::Scope {
            span: Some(span), ..
        }) = self.pop_frame()
        {
            sh.tracer.close(span, None, attributes, sensitive);
        }
        match self.append(output, false) {
            Ok(()) => self.advance(sh),
            Err(e) => self.reject(e, sh),
        }
    }
}
