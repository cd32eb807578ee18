use super::*;

#[test]
fn ids_use_two_counters_and_root_is_trace_zero() {
    let mut t = Tracer::default();
    assert_eq!(SpanId::ROOT.to_string(), "trace-0");
    assert_eq!(t.next_trace_id().to_string(), "trace-1");
    assert_eq!(t.next_span_id().to_string(), "span-1");
    assert_eq!(t.next_trace_id().to_string(), "trace-2");
}

#[test]
fn disabled_tracer_records_nothing() {
    let mut t = Tracer::default();
    let s = t.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![],
        vec![],
    );
    t.close(s, None, vec![], vec![]);
    assert!(!t.has_pending());
}

#[test]
fn failed_span_carries_type_as_metadata_and_message_as_sensitive() {
    let mut t = Tracer::default();
    t.set_enabled(true);
    let s = t.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![],
        vec![],
    );
    let failure = SpanFailure {
        error_type: "TypeError".into(),
        message: "boom".into(),
    };
    t.close(s, Some(&failure), vec![], vec![]);
    let records = t.drain();
    assert_eq!(records.len(), 2);
    let json = serde_json::to_value(&records[1]).unwrap();
    assert_eq!(json["type"], "span.end");
    assert_eq!(json["status"], "error");
    assert_eq!(json["sequence"], 2);
    assert_eq!(json["attributes"]["error.type"], "TypeError");
    assert_eq!(json["sensitive"]["error.message"], "boom");
    assert!(json.get("parentSpanId").is_none());
    let (start, end) = (json_at(&records[0]), json["at"].as_f64().unwrap());
    assert!(start <= end);
    assert!(end <= trace_clock_ms());
    let duration = json["durationMs"].as_f64().unwrap();
    assert!(
        (end - start - duration).abs() < 1e-6,
        "at ({start}, {end}) disagrees with durationMs {duration}"
    );
}

fn json_at(record: &TraceRecord) -> f64 {
    serde_json::to_value(record).unwrap()["at"]
        .as_f64()
        .unwrap()
}

#[test]
fn span_opened_untraced_reports_its_end_with_identity_once_tracing_is_on() {
    let mut t = Tracer::default();
    let parent = t.next_trace_id();
    let id = t.next_span_id();
    let s = t.open(
        id,
        Some(parent),
        SpanKind::Agent,
        "Agent".into(),
        vec![],
        vec![],
    );
    assert!(!t.has_pending());
    t.set_enabled(true);
    t.close(s, None, vec![], vec![]);
    let records = t.drain();
    assert_eq!(records.len(), 1);
    let json = serde_json::to_value(&records[0]).unwrap();
    assert_eq!(json["type"], "span.end");
    assert_eq!(json["spanId"], "span-1");
    assert_eq!(json["parentSpanId"], "trace-1");
    assert_eq!(json["kind"], "agent");
    assert_eq!(json["name"], "Agent");
    assert_eq!(json["status"], "ok");
    assert_eq!(json["sequence"], 1);
}

#[test]
fn without_consent_no_sensitive_attribute_is_kept() {
    let text = |key: &str, value: &str| {
        vec![(
            AttrKey::from(key.to_string()),
            AttrValue::Text(value.into()),
        )]
    };
    let mut t = Tracer::default();
    t.set_enabled(true);
    assert!(t.wants_content());
    t.set_content(false);
    assert!(!t.wants_content());
    let id = t.next_span_id();
    let s = t.open(
        id,
        None,
        SpanKind::Agent,
        "Agent".into(),
        vec![],
        text("prompt", "p"),
    );
    t.point(
        id,
        None,
        "capability.tool".into(),
        vec![],
        text("input", "i"),
    );
    let failure = SpanFailure {
        error_type: "TypeError".into(),
        message: "secret".into(),
    };
    t.close(s, Some(&failure), vec![], text("output", "o"));
    let records = t.drain();
    assert_eq!(records.len(), 3);
    for record in &records {
        let (TraceRecord::SpanStart { sensitive, .. }
        | TraceRecord::SpanEnd { sensitive, .. }
        | TraceRecord::Point { sensitive, .. }) = record;
        assert!(sensitive.is_empty(), "{record:?}");
    }
    let TraceRecord::SpanEnd { attributes, .. } = &records[2] else {
        panic!("the last record is the end")
    };
    assert_eq!(attributes, &text("error.type", "TypeError"));
    // Consent again: content is kept from then on.
    t.set_content(true);
    let s = t.open(
        id,
        None,
        SpanKind::Agent,
        "Agent".into(),
        vec![],
        text("prompt", "p"),
    );
    drop(s);
    let TraceRecord::SpanStart { sensitive, .. } = &t.drain()[0] else {
        panic!("a start")
    };
    assert_eq!(sensitive, &text("prompt", "p"));
}

/// A tap that keeps what it is given, shared with the test (position_tests.rs uses it too).
pub(crate) struct Kept(pub(crate) std::rc::Rc<std::cell::RefCell<Vec<TraceRecord>>>);

impl TraceTap for Kept {
    fn record(&mut self, record: TraceRecord) {
        self.0.borrow_mut().push(record);
    }
}

fn open_and_close(t: &mut Tracer) {
    let s = t.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![],
        vec![],
    );
    t.point(SpanId::ROOT, None, "note".into(), vec![], vec![]);
    t.close(s, None, vec![], vec![]);
}

#[test]
fn a_tap_alone_gets_every_record_and_leaves_nothing_to_drain() {
    let kept = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut t = Tracer::default();
    t.set_tap(Some(Box::new(Kept(kept.clone()))));
    assert!(t.enabled());
    open_and_close(&mut t);
    assert!(!t.has_pending());
    let sequences: Vec<_> = kept
        .borrow()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap()["sequence"].clone())
        .collect();
    assert_eq!(sequences, [1, 2, 3]);
}

#[test]
fn a_tap_and_js_both_get_each_record() {
    let kept = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut t = Tracer::default();
    t.set_enabled(true);
    t.set_tap(Some(Box::new(Kept(kept.clone()))));
    open_and_close(&mut t);
    assert_eq!(t.drain(), *kept.borrow());
    assert_eq!(kept.borrow().len(), 3);
    t.set_tap(None);
    t.set_enabled(false);
    assert!(!t.enabled());
}
