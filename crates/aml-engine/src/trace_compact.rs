//! A record's fields in the record-sink protocol's order (lib/observability/trace-sink.js):
//! - start `0, spanId, parentSpanId | none, kind, name, at, attributes, sensitive?`
//! - end   `1, spanId, kind, failed, durationMs, attributes, sensitive?`
//! - event `2, spanId, name, at, attributes, sensitive?`
//!
//! The one place that reads them out of a [`TraceRecord`] (and clamps a duration at 0), for
//! both encodings of the layout: numbers for JS (trace_batch.rs) and JSON for a run's events
//! file (crates/aml-runs).

use crate::span_id::SpanId;
use crate::trace::{Attributes, SpanStatus, TraceRecord};

/// One field of the compact form.
pub enum CompactField<'a> {
    /// The record's type: 0 start, 1 end, 2 event.
    Type(u8),
    /// `at` or `durationMs`.
    Number(f64),
    Span(SpanId),
    /// A span start without a parent.
    NoSpan,
    /// A kind or a name.
    Text(&'a str),
    /// `failed`.
    Bool(bool),
    Attributes(&'a Attributes),
}

impl TraceRecord {
    /// Hands `field` each field of the compact form in order; `content` adds the sensitive
    /// attributes last (an empty set too: the reader then knows where the record ends).
    pub fn compact_fields<'a>(&'a self, content: bool, mut field: impl FnMut(CompactField<'a>)) {
        use CompactField::{Attributes as Attrs, Bool, NoSpan, Number, Span, Text, Type};
        let sensitive = match self {
            TraceRecord::SpanStart {
                span_id,
                parent,
                at,
                kind,
                name,
                attributes,
                sensitive,
                ..
            } => {
                field(Type(0));
                field(Span(*span_id));
                field(parent.map_or(NoSpan, Span));
                field(Text(kind.as_str()));
                field(Text(name));
                field(Number(*at));
                field(Attrs(attributes));
                sensitive
            }
            TraceRecord::SpanEnd {
                span_id,
                kind,
                status,
                duration_ms,
                attributes,
                sensitive,
                ..
            } => {
                field(Type(1));
                field(Span(*span_id));
                field(Text(kind.as_str()));
                field(Bool(*status == SpanStatus::Error));
                field(Number(duration_ms.max(0.0)));
                field(Attrs(attributes));
                sensitive
            }
            TraceRecord::Point {
                span_id,
                at,
                name,
                attributes,
                sensitive,
                ..
            } => {
                field(Type(2));
                field(Span(*span_id));
                field(Text(name));
                field(Number(*at));
                field(Attrs(attributes));
                sensitive
            }
        };
        if content {
            field(Attrs(sensitive));
        }
    }
}
