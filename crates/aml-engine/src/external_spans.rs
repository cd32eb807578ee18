//! Spans opened by the driver rather than by the frame machine: `agent.session`,
//! `agent.turn`, `agent.cleanup` and `tool` spans live inside a provider call, which the
//! engine does not model as frames. They still share the domain's ids and sequence.

use std::collections::HashMap;

use crate::error::EvalError;
use crate::identity::CounterHash;
use crate::span_id::SpanId;
use crate::trace::{Attributes, OpenSpan, SpanFailure, SpanKind, Tracer};

#[derive(Debug, Default)]
pub(crate) struct ExternalSpans {
    /// Keyed by the domain's own span counters, so hashed with one multiply (identity.rs).
    open: HashMap<SpanId, OpenSpan, CounterHash>,
}

impl ExternalSpans {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        &mut self,
        tracer: &mut Tracer,
        kind: SpanKind,
        name: String,
        parent: Option<SpanId>,
        resource: bool,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> SpanId {
        let id = if resource {
            tracer.next_span_id()
        } else {
            tracer.next_trace_id()
        };
        let span = tracer.open(id, parent, kind, name.into(), attributes, sensitive);
        self.open.insert(id, span);
        id
    }

    pub(crate) fn close(
        &mut self,
        tracer: &mut Tracer,
        id: SpanId,
        failure: Option<&SpanFailure>,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> Result<(), EvalError> {
        let span = self.open.remove(&id).ok_or(EvalError::Invariant(
            "AML trace spans completed out of lifecycle order",
        ))?;
        tracer.close(span, failure, attributes, sensitive);
        Ok(())
    }

    /// The parent recorded for an open span (point events repeat it).
    pub(crate) fn parent_of(&self, id: SpanId) -> Option<Option<SpanId>> {
        self.open.get(&id).map(|span| span.parent)
    }
}
