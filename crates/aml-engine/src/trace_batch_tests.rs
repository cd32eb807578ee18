use serde_json::{json, Value};

use super::*;
use crate::trace::{SpanFailure, SpanKind, Tracer};

/// Reads batches the way the facade does (lib/observability/trace-batch.js), into the sink
/// protocol's compact records, so the tests state the expected records plainly.
#[derive(Default)]
struct Reader {
    table: Vec<String>,
}

struct Cursor<'a> {
    numbers: &'a [f64],
    at: usize,
    table: &'a [String],
    local: &'a [String],
}

impl Cursor<'_> {
    fn next(&mut self) -> f64 {
        self.at += 1;
        self.numbers[self.at - 1]
    }
    fn string(&mut self) -> Value {
        let reference = self.next();
        let text = if reference >= 0.0 {
            &self.table[reference as usize]
        } else {
            &self.local[(-reference - 1.0) as usize]
        };
        Value::String(text.clone())
    }
    fn span(&mut self) -> Value {
        let encoded = self.next();
        if encoded < 0.0 {
            return Value::Null;
        }
        let n = (encoded / 2.0).floor() as u64;
        let prefix = if encoded % 2.0 == 1.0 {
            "span"
        } else {
            "trace"
        };
        Value::String(format!("{prefix}-{n}"))
    }
    fn attributes(&mut self) -> Value {
        let mut map = serde_json::Map::new();
        for _ in 0..self.next() as usize {
            let Value::String(key) = self.string() else {
                unreachable!()
            };
            let value = match self.next() as u8 {
                0 => json!(false),
                1 => json!(true),
                2 => json!(self.next()),
                3 => self.string(),
                _ => Value::Array((0..self.next() as usize).map(|_| self.string()).collect()),
            };
            map.insert(key, value);
        }
        Value::Object(map)
    }
}

impl Reader {
    fn read(&mut self, batch: &TraceBatch, content: bool) -> Value {
        self.table
            .extend(batch.strings[..batch.interned].iter().cloned());
        let mut cursor = Cursor {
            numbers: &batch.numbers,
            at: 0,
            table: &self.table,
            local: &batch.strings[batch.interned..],
        };
        let mut records = Vec::new();
        while cursor.at < cursor.numbers.len() {
            let mut record = match cursor.next() as u8 {
                0 => vec![
                    json!(0),
                    cursor.span(),
                    cursor.span(),
                    cursor.string(),
                    cursor.string(),
                    json!(cursor.next()),
                    cursor.attributes(),
                ],
                1 => vec![
                    json!(1),
                    cursor.span(),
                    cursor.string(),
                    json!(cursor.next() == 1.0),
                    json!(cursor.next()),
                    cursor.attributes(),
                ],
                _ => vec![
                    json!(2),
                    cursor.span(),
                    cursor.string(),
                    json!(cursor.next()),
                    cursor.attributes(),
                ],
            };
            if content {
                record.push(cursor.attributes());
            }
            records.push(Value::Array(record));
        }
        Value::Array(records)
    }
}

fn text(key: &str, value: &str) -> Attributes {
    vec![(key.to_string().into(), AttrValue::Text(value.into()))]
}

fn field(record: &TraceRecord, name: &str) -> f64 {
    serde_json::to_value(record).unwrap()[name]
        .as_f64()
        .unwrap()
}

#[test]
fn records_decode_to_the_compact_form_and_carry_sensitive_only_with_content() {
    let mut t = Tracer::default();
    t.set_enabled(true);
    t.set_content(true);
    let parent = t.next_trace_id();
    let id = t.next_span_id();
    let s = t.open(
        id,
        Some(parent),
        SpanKind::Agent,
        "Agent".into(),
        text("model", "m"),
        vec![],
    );
    t.point(
        id,
        Some(parent),
        "capability.tool".into(),
        text("name", "lookup"),
        vec![],
    );
    let failure = SpanFailure {
        error_type: "TypeError".into(),
        message: "boom".into(),
    };
    t.close(
        s,
        Some(&failure),
        text("provider", "p"),
        text("output", "secret"),
    );
    let records = t.drain();
    let (start, point) = (field(&records[0], "at"), field(&records[1], "at"));
    let duration = field(&records[2], "durationMs");

    let redacted = Reader::default().read(&TraceStrings::default().encode(&records, false), false);
    assert_eq!(
        redacted,
        json!([
            [0, "span-1", "trace-1", "agent", "Agent", start, { "model": "m" }],
            [2, "span-1", "capability.tool", point, { "name": "lookup" }],
            [1, "span-1", "agent", true, duration, { "provider": "p", "error.type": "TypeError" }],
        ])
    );
    let batch = TraceStrings::default().encode(&records, true);
    let content = Reader::default().read(&batch, true);
    assert_eq!(
        content[2][6],
        json!({ "output": "secret", "error.message": "boom" })
    );
    assert_eq!(content[0][7], json!({}));
    let without = TraceStrings::default().encode(&records, false);
    assert!(
        !without.strings.iter().any(|s| s == "secret" || s == "boom"),
        "no content crosses without consent: {:?}",
        without.strings
    );
}

#[test]
fn the_root_has_no_parent_and_values_of_every_type_round_trip() {
    let mut t = Tracer::default();
    t.set_enabled(true);
    let root = t.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![
            ("yes".into(), AttrValue::Bool(true)),
            ("no".into(), AttrValue::Bool(false)),
            ("n".into(), AttrValue::Number(-2.5)),
            ("list".into(), AttrValue::List(vec!["a".into(), "b".into()])),
            ("empty".into(), AttrValue::List(vec![])),
        ],
        vec![],
    );
    drop(root);
    let decoded = Reader::default().read(&TraceStrings::default().encode(&t.drain(), false), false);
    assert_eq!(decoded[0][1], json!("trace-0"));
    assert_eq!(decoded[0][2], Value::Null);
    assert_eq!(
        decoded[0][6],
        json!({ "yes": true, "no": false, "n": -2.5, "list": ["a", "b"], "empty": [] })
    );
}

#[test]
fn recurring_strings_cross_once_and_long_ones_stay_in_their_batch() {
    let mut strings = TraceStrings::default();
    let mut reader = Reader::default();
    let long = "x".repeat(MAX_INTERNED_LEN + 1);
    let batch_of = |t: &mut Tracer| {
        let id = t.next_span_id();
        let span = t.open(
            id,
            Some(SpanId::ROOT),
            SpanKind::Agent,
            "Agent".into(),
            vec![
                ("provider".into(), AttrValue::Text("bench".into())),
                ("prompt".into(), AttrValue::Text(long.clone())),
            ],
            vec![],
        );
        t.close(span, None, vec![], vec![]);
        t.drain()
    };
    let mut t = Tracer::default();
    t.set_enabled(true);
    let first = strings.encode(&batch_of(&mut t), false);
    assert_eq!(
        first.strings[..first.interned],
        ["agent", "Agent", "provider", "bench", "prompt"]
    );
    assert_eq!(first.strings[first.interned..], [long.as_str()]);
    reader.read(&first, false);
    let second = strings.encode(&batch_of(&mut t), false);
    assert_eq!(second.interned, 0, "{:?}", second.strings);
    assert_eq!(second.strings, [long.as_str()]);
    let decoded = reader.read(&second, false);
    assert_eq!(decoded[0][1], json!("span-2"));
    assert_eq!(decoded[0][6]["prompt"], json!(long));
    assert_eq!(decoded[0][6]["provider"], json!("bench"));
}

#[test]
fn the_table_stops_growing_at_its_bound() {
    let mut strings = TraceStrings::default();
    let mut reader = Reader::default();
    let mut t = Tracer::default();
    t.set_enabled(true);
    for round in 0..3 {
        let attributes = (0..MAX_INTERNED / 2 + 1)
            .map(|i| (format!("k{round}-{i}").into(), AttrValue::Bool(true)))
            .collect();
        let span = t.open(
            SpanId::Trace(round + 1),
            Some(SpanId::ROOT),
            SpanKind::Component,
            "C".into(),
            attributes,
            vec![],
        );
        t.close(span, None, vec![], vec![]);
        let batch = strings.encode(&t.drain(), false);
        let decoded = reader.read(&batch, false);
        assert_eq!(
            decoded[0][6].as_object().unwrap().len(),
            MAX_INTERNED / 2 + 1
        );
    }
    assert_eq!(reader.table.len(), MAX_INTERNED);
}

#[test]
fn kinds_have_their_public_names() {
    for kind in SpanKind::ALL {
        assert_eq!(SpanKind::parse(kind.as_str()), Some(kind));
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
    }
}
