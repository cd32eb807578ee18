//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4), part 5: the Agent
//! and System spans and the `capability.tool` point events.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use aml_engine::{AgentEntry, EvalError};
use common::*;
use serde_json::{json, Value};

/// The records of spans of `kind` (start and end), or point events named `name`.
fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn agent_spans_are_span_n_with_documented_end_attributes() {
    let mut run = Run::with_policy(limits(), with_system("rt"))
        .with_provider(|p| Ok(format!("out:{}", p.prompt)));
    run.d.set_tracing(true);
    run.d.open_root();
    let entry = AgentEntry {
        model: Some("m1".into()),
        system: Some("fixed".into()),
        ..entry("prov")
    };
    let tree = agent_with(
        entry,
        arr(vec![
            text(" ask "),
            agent(text("inner")),
            tool("t1", 0),
            tool("t2", 1),
            follow_up(text("again")),
        ]),
    );
    assert_eq!(run.eval(tree).unwrap(), "out:ask out:inner");
    run.close_root(None);
    let agents = of_kind(&run.records, "agent");
    let lines: Vec<String> = agents
        .iter()
        .map(|r| {
            format!(
                "{} {} {}<{}",
                r["type"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["spanId"].as_str().unwrap(),
                r["parentSpanId"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "span.start Agent span-1<trace-0",
            "span.start Agent span-2<span-1",
            "span.end Agent span-2<span-1",
            "span.end Agent span-1<trace-0",
        ]
    );
    assert_eq!(agents[0]["attributes"], json!({}));
    assert_eq!(agents[0]["sensitive"], json!({}));
    let outer_end = agents[3];
    assert_eq!(outer_end["status"], "ok");
    assert_eq!(
        outer_end["attributes"],
        json!({"provider": "prov", "tools": 2.0, "mcpServers": 0.0, "turns": 2.0, "model": "m1"})
    );
    assert_eq!(
        outer_end["sensitive"],
        json!({"prompt": "ask out:inner", "system": "rt\nfixed", "output": "out:ask out:inner"})
    );
    let inner_end = agents[2];
    assert_eq!(
        inner_end["attributes"],
        json!({"provider": "p", "tools": 0.0, "mcpServers": 0.0, "turns": 1.0})
    );
    assert_eq!(
        inner_end["sensitive"],
        json!({"prompt": "inner", "system": "rt", "output": "out:inner"})
    );
}

#[test]
fn capability_tool_events_are_emitted_at_plan_time_on_the_agent_span() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut run = Run::new(limits());
    run.d.set_tracing(true);
    run.d.open_root();
    let l = log.clone();
    let tree = agent_using(
        "prov",
        move |plan| {
            l.borrow_mut().push(plan.span.clone());
            Ok(String::new())
        },
        arr(vec![tool("search", 3), text("p"), tool("read", 4)]),
    );
    run.eval(tree).unwrap();
    run.close_root(None);
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start span-1<trace-0 Agent",
            "event span-1",
            "event span-1",
            "end span-1 ok",
            "end trace-0 ok",
        ]
    );
    let points: Vec<&Value> = run
        .records
        .iter()
        .filter(|r| r["type"] == "event")
        .collect();
    assert_eq!(points[0]["name"], "capability.tool");
    assert_eq!(points[0]["parentSpanId"], "trace-0");
    assert_eq!(
        points[0]["attributes"],
        json!({"kind": "javascript", "name": "search"})
    );
    assert_eq!(
        points[1]["attributes"],
        json!({"kind": "javascript", "name": "read"})
    );
    assert_eq!(
        run.plans[0].tools,
        [("search".into(), 3), ("read".into(), 4)]
    );
    assert_eq!(*log.borrow(), ["span-1"]);
}

#[test]
fn system_spans_are_trace_n_with_index_and_sensitive_content() {
    let mut run = Run::traced(limits());
    let tree = agent(arr(vec![
        system(text(" first ")),
        text("p"),
        system(comp("Policy", |_| text("second"))),
        agent(system(text("inner"))),
    ]));
    run.eval(tree).unwrap();
    run.close_root(None);
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start span-1<trace-0 Agent",
            "start trace-1<span-1 System",
            "end trace-1 ok",
            "start trace-2<span-1 System",
            "start trace-3<trace-2 Policy",
            "end trace-3 ok",
            "end trace-2 ok",
            "start span-2<span-1 Agent",
            "start trace-4<span-2 System",
            "end trace-4 ok",
            "end span-2 ok",
            "end span-1 ok",
            "end trace-0 ok",
        ]
    );
    let systems = of_kind(&run.records, "system");
    let starts: Vec<&Value> = systems
        .iter()
        .copied()
        .filter(|r| r["type"] == "span.start")
        .collect();
    let indices: Vec<&Value> = starts.iter().map(|r| &r["attributes"]["index"]).collect();
    assert_eq!(indices, [&json!(1.0), &json!(2.0), &json!(1.0)]);
    let ends: Vec<&Value> = systems
        .iter()
        .copied()
        .filter(|r| r["type"] == "span.end")
        .collect();
    assert_eq!(ends[0]["sensitive"], json!({"content": "first"}));
    assert_eq!(ends[0]["attributes"], json!({}));
    assert_eq!(ends[1]["sensitive"], json!({"content": "second"}));
    assert_eq!(run.plans[1].system, "first\nsecond");
}

#[test]
fn failures_close_capture_spans_with_the_error() {
    let mut run = Run::traced(limits());
    let tree = agent(arr(vec![text("p"), system(text("  "))]));
    assert_eq!(run.eval(tree), engine(EvalError::EmptyContent("System")));
    run.close_root(None);
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start span-1<trace-0 Agent",
            "start trace-1<span-1 System",
            "end trace-1 error",
            "end span-1 error",
            "end trace-0 ok",
        ]
    );
    let end = &run.records[3];
    assert_eq!(end["attributes"]["error.type"], "EvaluationError");
    assert_eq!(
        end["sensitive"]["error.message"],
        "<System> must resolve to non-empty text"
    );
    // A provider failure closes the Agent span (and its enclosing spans) with the error.
    let mut run = Run::traced(limits()).with_provider(|_| Err("boom".into()));
    let tree = comp("App", |_| agent(text("p")));
    assert_eq!(run.eval(tree), Err(Failure::Thrown("boom".into())));
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start trace-1<trace-0 App",
            "start span-1<trace-1 Agent",
            "end span-1 error",
            "end trace-1 error",
        ]
    );
    assert_eq!(run.records[3]["sensitive"]["error.message"], "boom");
}

#[test]
fn span_ids_do_not_depend_on_tracing() {
    let tree = || {
        arr(vec![
            comp("A", |_| agent(text("a"))),
            agent(arr(vec![system(text("s")), agent(text("b"))])),
        ])
    };
    let mut quiet = Run::new(limits());
    quiet.eval(tree()).unwrap();
    let mut traced = Run::traced(limits());
    traced.eval(tree()).unwrap();
    let ids = |run: &Run| {
        run.plans
            .iter()
            .map(|p| (p.span.clone(), p.parent.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&quiet), ids(&traced));
    assert_eq!(
        ids(&quiet),
        [
            ("span-1".to_string(), "trace-1".to_string()),
            ("span-3".to_string(), "span-2".to_string()),
            ("span-2".to_string(), "trace-0".to_string()),
        ]
    );
    assert!(quiet.records.is_empty());
}
