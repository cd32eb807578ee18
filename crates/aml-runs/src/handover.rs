//! How a recorded run's trace records cross from the JS thread to the recorder's writer
//! (docs/STUDIO.md "Cost"): the tap appends each record's compact fields
//! (`aml_engine::TraceRecord::compact_fields`) to the run's pending bytes in a plain binary
//! form, and the writer turns them into the JSON of the events file (compact.rs).
//!
//! Why not JSON on the JS thread: escaping, number formatting and a call per small copy cost
//! about 0.25 µs an Agent there, 9 % of a 2,000-Agent fan-out (measured with `perf`); the
//! binary form is fixed-size stores and one copy per text. Why bytes and not the records:
//! records freed on the writer made both threads contend for the allocator they came from
//! (recorder.rs). The bytes are all the writer touches.
//!
//! The form, per field: a tag byte, then its payload (numbers little-endian; texts as a `u32`
//! length and their UTF-8 bytes). Attribute sets carry a `u32` count and, per attribute, the
//! key as a text, a value tag and its payload; a list or a usage value is carried as its
//! JSON text (rare). [`END`] closes a record.

use aml_engine::trace::Attributes;
use aml_engine::{AttrValue, CompactField, SpanId, TraceRecord};

const TYPE: u8 = 0;
const NUMBER: u8 = 1;
const TRACE: u8 = 2;
const SPAN: u8 = 3;
const NO_SPAN: u8 = 4;
const TEXT: u8 = 5;
const FALSE: u8 = 6;
const TRUE: u8 = 7;
const ATTRIBUTES: u8 = 8;
const END: u8 = 9;

const VALUE_FALSE: u8 = 0;
const VALUE_TRUE: u8 = 1;
const VALUE_NUMBER: u8 = 2;
const VALUE_TEXT: u8 = 3;
const VALUE_JSON: u8 = 4;

fn text(out: &mut Vec<u8>, text: &str) {
    // Texts of a trace record are far below 4 GiB (the events file is capped far lower).
    #[allow(clippy::cast_possible_truncation)]
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn attributes(out: &mut Vec<u8>, attributes: &Attributes) {
    #[allow(clippy::cast_possible_truncation)]
    out.extend_from_slice(&(attributes.len() as u32).to_le_bytes());
    for (key, value) in attributes {
        text(out, key);
        match value {
            AttrValue::Bool(b) => out.push(if *b { VALUE_TRUE } else { VALUE_FALSE }),
            AttrValue::Number(n) => {
                out.push(VALUE_NUMBER);
                out.extend_from_slice(&n.to_le_bytes());
            }
            AttrValue::Text(value) => {
                out.push(VALUE_TEXT);
                text(out, value);
            }
            value => {
                out.push(VALUE_JSON);
                let mut json = Vec::new();
                crate::compact::value(&mut json, value);
                // compact.rs writes UTF-8 JSON.
                text(out, std::str::from_utf8(&json).unwrap_or("null"));
            }
        }
    }
}

/// Appends `record`'s fields to `out` (see the module comment); `content`: the run keeps
/// sensitive attributes.
pub(crate) fn encode(out: &mut Vec<u8>, record: &TraceRecord, content: bool) {
    record.compact_fields(content, |field| match field {
        CompactField::Type(tag) => out.extend_from_slice(&[TYPE, tag]),
        CompactField::Number(n) => {
            out.push(NUMBER);
            out.extend_from_slice(&n.to_le_bytes());
        }
        CompactField::Span(SpanId::Trace(n)) => {
            out.push(TRACE);
            out.extend_from_slice(&n.to_le_bytes());
        }
        CompactField::Span(SpanId::Span(n)) => {
            out.push(SPAN);
            out.extend_from_slice(&n.to_le_bytes());
        }
        CompactField::NoSpan => out.push(NO_SPAN),
        CompactField::Text(value) => {
            out.push(TEXT);
            text(out, value);
        }
        CompactField::Bool(b) => out.push(if b { TRUE } else { FALSE }),
        CompactField::Attributes(list) => {
            out.push(ATTRIBUTES);
            attributes(out, list);
        }
    });
    out.push(END);
}

/// Reads the encoded records of `bytes`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(taken)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }

    fn text(&mut self) -> Option<&'a str> {
        let len = self.u32()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

/// Appends the JSON of each record encoded in `bytes` to `json`, comma-separated; `after`:
/// `json` already ends with a record (a comma comes first). False when `bytes` are not whole
/// records of [`encode`]'s form (what was whole is kept).
pub(crate) fn decode(json: &mut Vec<u8>, bytes: &[u8], mut after: bool) -> bool {
    let mut reader = Reader { bytes, at: 0 };
    while reader.at < bytes.len() {
        let kept = json.len();
        if after {
            json.push(b',');
        }
        if decode_record(json, &mut reader).is_none() {
            json.truncate(kept);
            return false;
        }
        after = true;
    }
    true
}

fn decode_record(json: &mut Vec<u8>, reader: &mut Reader<'_>) -> Option<()> {
    use crate::compact::{span, string, time};
    json.push(b'[');
    let mut first = true;
    loop {
        let tag = reader.byte()?;
        if tag == END {
            json.push(b']');
            return Some(());
        }
        if !first {
            json.push(b',');
        }
        first = false;
        match tag {
            TYPE => json.push(b'0' + reader.byte()?),
            NUMBER => time(json, reader.f64()?),
            TRACE => span(json, SpanId::Trace(reader.u64()?)),
            SPAN => span(json, SpanId::Span(reader.u64()?)),
            NO_SPAN => json.extend_from_slice(b"null"),
            TEXT => string(json, reader.text()?),
            FALSE => json.extend_from_slice(b"false"),
            TRUE => json.extend_from_slice(b"true"),
            ATTRIBUTES => decode_attributes(json, reader)?,
            _ => return None,
        }
    }
}

fn decode_attributes(json: &mut Vec<u8>, reader: &mut Reader<'_>) -> Option<()> {
    use crate::compact::{number, string};
    json.push(b'{');
    for index in 0..reader.u32()? {
        if index > 0 {
            json.push(b',');
        }
        string(json, reader.text()?);
        json.push(b':');
        match reader.byte()? {
            VALUE_FALSE => json.extend_from_slice(b"false"),
            VALUE_TRUE => json.extend_from_slice(b"true"),
            VALUE_NUMBER => number(json, reader.f64()?),
            VALUE_TEXT => string(json, reader.text()?),
            VALUE_JSON => json.extend_from_slice(reader.text()?.as_bytes()),
            _ => return None,
        }
    }
    json.push(b'}');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aml_engine::trace::Tracer;
    use aml_engine::SpanKind;

    fn records() -> Vec<TraceRecord> {
        let mut tracer = Tracer::default();
        tracer.set_enabled(true);
        tracer.set_content(true);
        let span = tracer.open(
            SpanId::Span(3),
            Some(SpanId::Trace(1)),
            SpanKind::Agent,
            "Agent".into(),
            vec![
                (
                    "list".into(),
                    AttrValue::List(vec!["a\"".into(), "b".into()]),
                ),
                ("n".into(), AttrValue::Number(2.5)),
                ("on".into(), AttrValue::Bool(false)),
            ],
            vec![("prompt".into(), AttrValue::Text("p\n".into()))],
        );
        tracer.point(SpanId::Span(3), None, "note".into(), vec![], vec![]);
        tracer.close(
            span,
            None,
            vec![("t".into(), AttrValue::Text("x".into()))],
            vec![],
        );
        tracer.drain()
    }

    fn written(record: &TraceRecord, content: bool) -> String {
        let mut out = Vec::new();
        let mut encoded = Vec::new();
        encode(&mut encoded, record, content);
        assert!(decode(&mut out, &encoded, false));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_the_compact_arrays_as_json_parses_them() {
        let mut tracer = Tracer::default();
        tracer.set_enabled(true);
        tracer.set_content(true);
        let attributes = vec![
            (
                "name".into(),
                AttrValue::Text("a \"quoted\"\n\\ \u{1} é".into()),
            ),
            ("count".into(), AttrValue::Number(3.0)),
            ("ratio".into(), AttrValue::Number(0.25)),
            ("none".into(), AttrValue::Number(f64::NAN)),
            ("on".into(), AttrValue::Bool(true)),
            ("list".into(), AttrValue::List(vec!["x".into(), "y".into()])),
        ];
        let sensitive = vec![("prompt".into(), AttrValue::Text("secret".into()))];
        let span = tracer.open(
            SpanId::Span(7),
            Some(SpanId::ROOT),
            SpanKind::Agent,
            "Agent".into(),
            attributes,
            sensitive,
        );
        tracer.point(SpanId::Span(7), None, "note".into(), vec![], vec![]);
        tracer.close(span, None, vec![], vec![]);
        let records = tracer.drain();
        let start: serde_json::Value = serde_json::from_str(&written(&records[0], true)).unwrap();
        assert_eq!(start[0], 0);
        assert_eq!(start[1], "span-7");
        assert_eq!(start[2], "trace-0");
        assert_eq!(start[3], "agent");
        assert_eq!(start[4], "Agent");
        assert!(start[5].as_f64().unwrap() >= 0.0);
        assert_eq!(
            start[6],
            serde_json::json!({ "name": "a \"quoted\"\n\\ \u{1} é", "count": 3, "ratio": 0.25, "none": null, "on": true, "list": ["x", "y"] })
        );
        assert_eq!(start[7], serde_json::json!({ "prompt": "secret" }));
        let point: serde_json::Value = serde_json::from_str(&written(&records[1], false)).unwrap();
        assert_eq!(point.as_array().unwrap().len(), 5);
        assert_eq!(
            (point[0].clone(), point[2].clone()),
            (2.into(), "note".into())
        );
        let end = written(&records[2], false);
        assert!(end.starts_with(r#"[1,"span-7","agent",false,"#), "{end}");
    }

    #[test]
    fn records_decode_to_the_compact_json_comma_separated() {
        let mut bytes = Vec::new();
        for record in &records() {
            encode(&mut bytes, record, true);
        }
        let mut json = b"[".to_vec();
        assert!(decode(&mut json, &bytes, false));
        json.push(b']');
        let parsed: Vec<serde_json::Value> = serde_json::from_slice(&json).unwrap();
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[0][1], "span-3");
        assert_eq!(parsed[0][2], "trace-1");
        assert_eq!(
            parsed[0][6],
            serde_json::json!({ "list": ["a\"", "b"], "n": 2.5, "on": false })
        );
        assert_eq!(parsed[0][7], serde_json::json!({ "prompt": "p\n" }));
        assert_eq!(parsed[1][2], "note");
        assert_eq!(parsed[2][5], serde_json::json!({ "t": "x" }));
    }

    #[test]
    fn a_cut_record_is_refused_and_what_was_whole_is_kept() {
        let all = records();
        let mut bytes = Vec::new();
        encode(&mut bytes, &all[0], false);
        let whole = bytes.len();
        encode(&mut bytes, &all[2], false);
        let mut json = Vec::new();
        assert!(!decode(&mut json, &bytes[..bytes.len() - 2], false));
        let mut expected = Vec::new();
        assert!(decode(&mut expected, &bytes[..whole], false));
        assert_eq!(json, expected);
        // An unknown tag is refused too.
        assert!(!decode(&mut Vec::new(), &[0xff], false));
    }
}
