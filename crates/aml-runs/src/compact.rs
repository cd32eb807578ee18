//! A trace record in the run's events file: the compact array of the record-sink protocol
//! (lib/observability/trace-sink.js), which the studio page reads:
//! - start `[0, spanId, parentSpanId | null, kind, name, at, attributes, sensitive?]`
//! - end   `[1, spanId, kind, failed, durationMs, attributes, sensitive?]`
//! - event `[2, spanId, name, at, attributes, sensitive?]`
//!
//! `sensitive` is written only for a run recorded with content (docs/STUDIO.md "Content
//! policy"), and only when the record has some.

use aml_engine::trace::Attributes;
use aml_engine::{SpanStatus, TraceRecord};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// `record` as its compact array; `content`: the run keeps sensitive attributes.
pub(crate) struct Compact<'a> {
    pub record: &'a TraceRecord,
    pub content: bool,
}

struct Attrs<'a>(&'a Attributes);

impl Serialize for Attrs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Serialize for Compact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let sensitive = match self.record {
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
                seq.serialize_element(&0)?;
                seq.serialize_element(span_id)?;
                seq.serialize_element(parent)?;
                seq.serialize_element(kind)?;
                seq.serialize_element(name)?;
                seq.serialize_element(at)?;
                seq.serialize_element(&Attrs(attributes))?;
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
                seq.serialize_element(&1)?;
                seq.serialize_element(span_id)?;
                seq.serialize_element(kind)?;
                seq.serialize_element(&(*status == SpanStatus::Error))?;
                seq.serialize_element(duration_ms)?;
                seq.serialize_element(&Attrs(attributes))?;
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
                seq.serialize_element(&2)?;
                seq.serialize_element(span_id)?;
                seq.serialize_element(name)?;
                seq.serialize_element(at)?;
                seq.serialize_element(&Attrs(attributes))?;
                sensitive
            }
        };
        if self.content && !sensitive.is_empty() {
            seq.serialize_element(&Attrs(sensitive))?;
        }
        seq.end()
    }
}
