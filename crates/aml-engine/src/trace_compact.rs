//! The compact trace form a record sink consumes (the facade's `lib/observability/trace-sink.js`, used by
//! the OpenTelemetry exporter): positional JSON arrays instead of the public event objects.

use serde::Serialize;

use crate::trace::{attrs, Attributes, SpanStatus, TraceRecord};

/// Records in the compact form a record sink consumes (the facade's `lib/observability/trace-sink.js`):
/// one JSON array per record, without the public events' `sequence` and `timestamp`.
///
/// - start: `[0, spanId, parentSpanId | null, kind, name, at, attributes, sensitive?]`
/// - end: `[1, spanId, kind, failed, durationMs, attributes, sensitive?]`
/// - point: `[2, spanId, name, at, attributes, sensitive?]`
///
/// `sensitive` is written only when `content` is true (a consenting sink listens), so the
/// content of an evaluation nobody consented for never becomes JS text.
pub fn compact_json(records: &[TraceRecord], content: bool) -> serde_json::Result<String> {
    serde_json::to_string(&CompactRecords { records, content })
}

struct CompactRecords<'a> {
    records: &'a [TraceRecord],
    content: bool,
}

struct Compact<'a> {
    record: &'a TraceRecord,
    content: bool,
}

struct AttrsRef<'a>(&'a Attributes);

impl Serialize for AttrsRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        attrs(self.0, s)
    }
}

impl Serialize for CompactRecords<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.records.len()))?;
        for record in self.records {
            seq.serialize_element(&Compact {
                record,
                content: self.content,
            })?;
        }
        seq.end()
    }
}

impl Serialize for Compact<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let content = self.content;
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
                seq.serialize_element(&AttrsRef(attributes))?;
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
                seq.serialize_element(&duration_ms.max(0.0))?;
                seq.serialize_element(&AttrsRef(attributes))?;
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
                seq.serialize_element(&AttrsRef(attributes))?;
                sensitive
            }
        };
        if content {
            seq.serialize_element(&AttrsRef(sensitive))?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span_id::SpanId;
    use crate::trace::{AttrValue, SpanFailure, SpanKind, Tracer};

    #[test]
    fn compact_records_are_positional_and_carry_sensitive_only_with_content() {
        let mut t = Tracer::default();
        t.set_enabled(true);
        let parent = t.next_trace_id();
        let id = t.next_span_id();
        let attrs = |key: &str, value: &str| vec![(key.to_string(), AttrValue::Text(value.into()))];
        let s = t.open(
            id,
            Some(parent),
            SpanKind::Agent,
            "Agent".into(),
            attrs("model", "m"),
            vec![],
        );
        t.point(
            id,
            Some(parent),
            "capability.tool".into(),
            attrs("name", "lookup"),
            vec![],
        );
        let failure = SpanFailure {
            error_type: "TypeError".into(),
            message: "boom".into(),
        };
        t.close(
            s,
            Some(&failure),
            attrs("provider", "p"),
            attrs("output", "secret"),
        );
        let records = t.drain();
        let redacted: serde_json::Value =
            serde_json::from_str(&compact_json(&records, false).unwrap()).unwrap();
        let start_at = json_at(&records[0]);
        let point_at = serde_json::to_value(&records[1]).unwrap()["at"]
            .as_f64()
            .unwrap();
        let duration = serde_json::to_value(&records[2]).unwrap()["durationMs"]
            .as_f64()
            .unwrap();
        assert_eq!(
            redacted,
            serde_json::json!([
                [0, "span-1", "trace-1", "agent", "Agent", start_at, { "model": "m" }],
                [2, "span-1", "capability.tool", point_at, { "name": "lookup" }],
                [1, "span-1", "agent", true, duration, { "provider": "p", "error.type": "TypeError" }],
            ])
        );
        let content: serde_json::Value =
            serde_json::from_str(&compact_json(&records, true).unwrap()).unwrap();
        assert_eq!(
            content[2][6],
            serde_json::json!({ "output": "secret", "error.message": "boom" })
        );
        assert_eq!(content[0][7], serde_json::json!({}));
        let root = t.open(
            SpanId::ROOT,
            None,
            SpanKind::Evaluation,
            "evaluate".into(),
            vec![],
            vec![],
        );
        drop(root);
        let root_json: serde_json::Value =
            serde_json::from_str(&compact_json(&t.drain(), false).unwrap()).unwrap();
        assert_eq!(root_json[0][2], serde_json::Value::Null);
    }

    fn json_at(record: &TraceRecord) -> f64 {
        serde_json::to_value(record).unwrap()["at"]
            .as_f64()
            .unwrap()
    }
}
