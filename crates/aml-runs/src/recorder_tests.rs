use super::*;
use aml_engine::trace::{AttrValue, SpanFailure, Tracer};
use aml_engine::SpanId;

fn meta() -> Map<String, Value> {
    serde_json::json!({ "id": "r1", "status": "running" })
        .as_object()
        .unwrap()
        .clone()
}

/// An evaluation with one Agent (a prompt as sensitive attribute) and one failed Tool.
fn evaluate(tracer: &mut Tracer) {
    let root = tracer.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![],
        vec![],
    );
    let agent = tracer.next_span_id();
    let span = tracer.open(
        agent,
        Some(SpanId::ROOT),
        SpanKind::Agent,
        "Agent".into(),
        vec![],
        vec![("prompt".into(), AttrValue::Text("secret".into()))],
    );
    let tool = tracer.next_trace_id();
    let call = tracer.open(
        tool,
        Some(agent),
        SpanKind::Tool,
        "search".into(),
        vec![],
        vec![],
    );
    let failure = SpanFailure {
        error_type: "Error".into(),
        message: "no".into(),
    };
    tracer.close(call, Some(&failure), vec![], vec![]);
    tracer.close(span, None, vec![], vec![]);
    tracer.close(root, None, vec![], vec![]);
}

fn record(
    runs: &std::path::Path,
    content: bool,
    max_bytes: u64,
) -> (Option<String>, Vec<Value>, Value) {
    let recorder = Recorder::new(runs.to_path_buf(), max_bytes, content).unwrap();
    let (run, tap) = recorder.start("r1", meta()).unwrap();
    let mut tracer = Tracer::default();
    tracer.set_content(content);
    tracer.set_tap(Some(Box::new(tap)));
    evaluate(&mut tracer);
    let patch = serde_json::json!({ "status": "success" });
    recorder.finish(run, patch.as_object().unwrap().clone());
    let problem = recorder.close(run);
    let text = std::fs::read_to_string(runs.join("r1/events.jsonl")).unwrap_or_default();
    let records = text
        .lines()
        .flat_map(|line| serde_json::from_str::<Vec<Value>>(line).unwrap())
        .collect();
    let meta =
        serde_json::from_str(&std::fs::read_to_string(runs.join("r1/run.json")).unwrap()).unwrap();
    (problem, records, meta)
}

#[test]
fn a_closed_run_has_every_record_and_its_final_metadata() {
    let runs = tempfile::tempdir().unwrap();
    let (problem, records, meta) = record(runs.path(), false, 1 << 20);
    assert_eq!(problem, None);
    let heads: Vec<_> = records
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(
        heads,
        [
            (0.into(), "trace-0".into()),
            (0.into(), "span-1".into()),
            (0.into(), "trace-1".into()),
            (1.into(), "trace-1".into()),
            (1.into(), "span-1".into()),
            (1.into(), "trace-0".into()),
        ]
    );
    // A failed span: `failed` true and its error type among the metadata.
    assert_eq!(records[3][3], true);
    assert_eq!(records[3][5]["error.type"], "Error");
    assert_eq!(meta["status"], "success");
    assert_eq!(
        meta["counts"],
        serde_json::json!({ "agent": 1, "tool": 1, "script": 0 })
    );
    assert!(!serde_json::to_string(&records).unwrap().contains("secret"));
}

#[test]
fn content_is_written_only_for_a_run_recorded_with_it() {
    let runs = tempfile::tempdir().unwrap();
    let (_, records, _) = record(runs.path(), true, 1 << 20);
    assert_eq!(records[1][7]["prompt"], "secret");
    assert_eq!(records[3][6]["error.message"], "no");
}

#[test]
fn the_cap_stops_the_events_and_marks_the_run() {
    let runs = tempfile::tempdir().unwrap();
    let (problem, records, meta) = record(runs.path(), false, 64);
    assert_eq!(problem, None);
    assert!(records.is_empty());
    assert_eq!(meta["truncated"], true);
    assert_eq!(meta["counts"]["agent"], 1);
}

#[test]
fn a_run_directory_removed_mid_run_is_reported_at_close() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    let (run, tap) = recorder.start("r1", meta()).unwrap();
    let mut tracer = Tracer::default();
    tracer.set_tap(Some(Box::new(tap)));
    // The writer makes the directory; removed once it is there.
    while !runs.path().join("r1/run.json").exists() {
        std::thread::sleep(FLUSH_AFTER);
    }
    std::fs::remove_dir_all(runs.path().join("r1")).unwrap();
    evaluate(&mut tracer);
    let problem = recorder.close(run).expect("a problem");
    assert!(problem.contains("events.jsonl"), "{problem}");
}

#[test]
fn records_reach_the_file_before_close_within_the_flush_delay() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    let (run, mut tap) = recorder.start("r1", meta()).unwrap();
    let mut tracer = Tracer::default();
    tracer.set_enabled(true);
    let root = tracer.open(
        SpanId::ROOT,
        None,
        SpanKind::Evaluation,
        "evaluate".into(),
        vec![],
        vec![],
    );
    for record in tracer.drain() {
        tap.record(record);
    }
    // No close: the writer appends on its own. Polled, not timed: the test waits for the
    // line as a page would, however loaded the machine is.
    let path = runs.path().join("r1/events.jsonl");
    while std::fs::read_to_string(&path).map_or(true, |text| text.is_empty()) {
        std::thread::sleep(FLUSH_AFTER);
    }
    tracer.close(root, None, vec![], vec![]);
    assert_eq!(recorder.close(run), None);
}

#[test]
fn a_run_keeps_its_journal_with_native_answers_formatted_by_the_writer() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    let (run, _tap) = recorder.start("r1", meta()).unwrap();
    let mut index = aml_journal::JournalIndex::default();
    index.record_text(0, "agent:c.", [1; 32], "hi");
    index.record_text(2, "agent:c.e1/A.", [2; 32], "there");
    let facade = r#"{"digest":"d","key":"tool:c.","kind":"tool","value":{"output":1}}"#;
    let journal = RunJournal {
        workflow: "wf.tsx#default".into(),
        count: 3,
        lines: vec![(1, facade.into())],
        native: index.recorded_copy(),
    };
    recorder.journal(run, journal);
    assert_eq!(recorder.close(run), None);
    let opened = aml_journal::open(&runs.path().join("r1/journal"), "wf.tsx#default").unwrap();
    assert_eq!(
        opened.records,
        [
            aml_journal::agent_text_record("agent:c.", &[1; 32], "hi"),
            facade.to_string(),
            aml_journal::agent_text_record("agent:c.e1/A.", &[2; 32], "there"),
        ]
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(runs.path().join("r1/run.json")).unwrap())
            .unwrap();
    assert_eq!(meta["journal"], true);
}

#[test]
fn the_writer_makes_the_step_points_the_engine_left_to_it_after_their_spans() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    let (run, tap) = recorder.start("r1", meta()).unwrap();
    let mut tracer = Tracer::default();
    tracer.set_tap(Some(Box::new(tap)));
    let span = tracer.open(
        SpanId::Span(4),
        Some(SpanId::ROOT),
        SpanKind::Agent,
        "Agent".into(),
        vec![],
        vec![],
    );
    tracer.close(span, None, vec![], vec![]);
    let mut index = aml_journal::JournalIndex::default();
    index.record_step_text(0, "agent:c.e0/A.", [1; 32], "hi", Some(4));
    index.record_text(1, "agent:c.e1/A.", [2; 32], "there");
    recorder.journal(
        run,
        RunJournal {
            workflow: "wf".into(),
            count: 2,
            lines: vec![],
            native: index.recorded_copy(),
        },
    );
    assert_eq!(recorder.close(run), None);
    let events = std::fs::read_to_string(runs.path().join("r1/events.jsonl")).unwrap();
    let records: Vec<Value> = events
        .lines()
        .flat_map(|line| serde_json::from_str::<Vec<Value>>(line).unwrap())
        .collect();
    let points: Vec<&Value> = records.iter().filter(|r| r[0] == 2).collect();
    assert_eq!(points.len(), 1, "{events}");
    assert_eq!(points[0][1], "span-4");
    assert_eq!(points[0][2], "journal.step");
    assert_eq!(
        points[0][4],
        serde_json::json!({ "key": "agent:c.e0/A.", "kind": "agent" })
    );
    let end = records
        .iter()
        .position(|r| r[0] == 1 && r[1] == "span-4")
        .unwrap();
    let point = records.iter().position(|r| r[0] == 2).unwrap();
    assert!(end < point, "{events}");
}

#[test]
fn a_journal_with_a_missing_native_answer_is_a_problem_not_a_file() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    let (run, _tap) = recorder.start("r1", meta()).unwrap();
    let journal = RunJournal {
        workflow: "wf".into(),
        count: 1,
        lines: vec![],
        native: aml_journal::RecordedCopy::default(),
    };
    recorder.journal(run, journal);
    assert_eq!(
        recorder.close(run).as_deref(),
        Some("journal entry 0 is not recorded")
    );
    assert!(!runs.path().join("r1/journal").exists());
}

#[test]
fn a_runs_directory_that_cannot_be_made_is_reported_at_close() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    let recorder = Recorder::new(dir.path().join("file/runs"), 1 << 20, false).unwrap();
    let (run, tap) = recorder.start("r1", meta()).unwrap();
    let mut tracer = Tracer::default();
    tracer.set_tap(Some(Box::new(tap)));
    evaluate(&mut tracer);
    let problem = recorder.close(run).expect("a problem");
    assert!(problem.contains("could not be created"), "{problem}");
}

#[test]
fn an_invalid_run_id_is_refused_at_start() {
    let runs = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(runs.path().to_path_buf(), 1 << 20, false).unwrap();
    assert!(recorder.start("../x", meta()).is_err());
}

#[test]
fn kept_buffers_are_emptied_bounded_and_handed_to_later_runs() {
    let spares = Spares::default();
    assert_eq!(spares.take().capacity(), 0);
    for _ in 0..SPARES + 2 {
        spares.keep(b"left over".to_vec());
    }
    // A buffer too large to keep, and one that never grew, are let go.
    spares.keep(Vec::with_capacity(SPARE_BYTES + 1));
    spares.keep(Vec::new());
    let kept: Vec<Vec<u8>> = (0..SPARES + 1).map(|_| spares.take()).collect();
    assert!(kept[..SPARES]
        .iter()
        .all(|bytes| bytes.is_empty() && bytes.capacity() > 0));
    assert_eq!(kept[SPARES].capacity(), 0);
}
