//! Nested tasks, task slots and the trace model, driven through the public `Domain` API.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use aml_engine::{Domain, EvalError, Limits, NodeKind, SpanFailure};
use common::*;
use serde_json::{json, Value};

const NOT_ACTIVE: EvalError = EvalError::Invariant("AML evaluation task is not active");

fn failure(error_type: &str, message: &str) -> SpanFailure {
    SpanFailure {
        error_type: error_type.into(),
        message: message.into(),
    }
}

#[test]
fn nested_task_inherits_depth() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let leaf = comp("Leaf", move |ctx| {
        s.borrow_mut().push(ctx.depth());
        text("leaf")
    });
    let s = seen.clone();
    let caller = comp("Caller", move |ctx| {
        let outer = ctx.depth();
        let ok = ctx.evaluate(leaf.clone());
        let too_deep = ctx.evaluate(chain(2, "x"));
        s.borrow_mut().push(outer);
        text(&format!("{ok:?}/{too_deep:?}"))
    });
    let mut run = Run::new(Limits {
        max_depth: 3,
        ..Limits::default()
    });
    // Root > Caller (depth 2) > evaluate(Leaf) at depth 3; evaluate(C1 > C2) reaches depth 4.
    let out = run.eval(comp("Root", move |_| caller.clone())).unwrap();
    assert_eq!(
        out, r#"Ok("leaf")/Err(Engine(MaxDepth(3)))"#,
        "a nested task's nodes start one below the calling component"
    );
    assert_eq!(*seen.borrow(), [3, 2]);
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn nested_task_inherits_active_identities() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let sibling = comp("Sibling", |_| text("s"));
    let s2 = sibling.clone();
    let caller = comp("Caller", move |ctx| {
        let me = V::Node(ctx.this.clone());
        l.borrow_mut()
            .push(ctx.evaluate(me).map_err(|e| e.message()));
        // Not on the active branch: fine, even though it is rendered again later.
        l.borrow_mut()
            .push(ctx.evaluate(s2.clone()).map_err(|e| e.message()));
        text("c")
    });
    let list = arr(vec![]);
    let V::Array(def) = &list else { unreachable!() };
    let l2 = log.clone();
    let lst = list.clone();
    let encloser = comp("Encloser", move |ctx| {
        l2.borrow_mut()
            .push(ctx.evaluate(lst.clone()).map_err(|e| e.message()));
        text("e")
    });
    def.items.borrow_mut().extend([caller, sibling, encloser]);
    let mut run = Run::new(Limits::default());
    assert_eq!(run.eval(list).unwrap(), "cse");
    assert_eq!(
        *log.borrow(),
        [
            Err("AML nodes cannot contain cycles".to_string()),
            Ok("s".to_string()),
            Err("AML arrays cannot contain cycles".to_string()),
        ]
    );
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn nested_task_output_is_separate_from_the_parent() {
    let live = Rc::new(RefCell::new(Vec::new()));
    let lv = live.clone();
    let wrap = comp("Wrap", move |ctx| {
        lv.borrow_mut().push(ctx.run.d.live_tasks());
        let probe = comp("Probe", |ctx| {
            let n = ctx.run.d.live_tasks();
            text(&format!("live={n}"))
        });
        let inner = ctx
            .evaluate(arr(vec![text("in"), text("ner:"), probe]))
            .unwrap();
        lv.borrow_mut().push(ctx.run.d.live_tasks());
        text(&format!("<{inner}>"))
    });
    let mut run = Run::new(Limits::default());
    let out = run
        .eval(arr(vec![text("before-"), wrap, text("-after")]))
        .unwrap();
    assert_eq!(out, "before-<inner:live=2>-after");
    assert_eq!(*live.borrow(), [1, 1]);
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn nested_engine_error_does_not_fail_the_parent() {
    let c = comp("Catches", |ctx| {
        let err = ctx
            .evaluate(arr(vec![text("x"), V::Invalid("symbol")]))
            .unwrap_err();
        text(&err.message())
    });
    let mut run = Run::new(Limits::default());
    assert_eq!(
        run.eval(arr(vec![text("["), c, text("]")])).unwrap(),
        "[AML cannot render a value of type symbol]"
    );
}

#[test]
fn task_slots_are_released_after_finish_error_and_fail() {
    let mut run = Run::new(Limits::default());
    assert_eq!(run.d.live_tasks(), 0);
    run.eval(arr(vec![text("a"), comp("C", |_| text("b"))]))
        .unwrap();
    assert_eq!(run.d.live_tasks(), 0);
    run.eval(comp("C", |_| V::Unknown)).unwrap_err();
    assert_eq!(run.d.live_tasks(), 0);
    let err = run.eval(comp("T", |_| arr(vec![V::Throw("boom".into())])));
    assert_eq!(err, Err(Failure::Thrown("boom".into())));
    assert_eq!(run.d.live_tasks(), 0);
    // A released slot is reused.
    let a = run.d.new_task(None).unwrap();
    let b = run.d.new_task(None).unwrap();
    assert_ne!(a, b);
    assert_eq!(run.d.live_tasks(), 2);
    run.d.fail(a, failure("Error", "x")).unwrap();
    assert_eq!(run.d.live_tasks(), 1);
    assert_eq!(run.d.new_task(None).unwrap(), a);
}

#[test]
fn finished_task_ids_are_invariant_errors() {
    let mut d = Domain::new(Limits::default());
    let t = d.new_task(None).unwrap();
    d.text(t, "x").unwrap();
    assert_eq!(d.finish(t).unwrap(), "x");
    assert_eq!(d.text(t, "y"), Err(NOT_ACTIVE));
    assert_eq!(d.empty(t), Err(NOT_ACTIVE));
    assert_eq!(d.array(t, 1, 1), Err(NOT_ACTIVE));
    assert_eq!(d.node(t, 2, NodeKind::Component, "C"), Err(NOT_ACTIVE));
    assert_eq!(d.invalid(t, "object"), Err(NOT_ACTIVE));
    assert_eq!(d.unknown_element(t), Err(NOT_ACTIVE));
    assert_eq!(d.depth(t), Err(NOT_ACTIVE));
    assert_eq!(d.current_span(t).unwrap_err(), NOT_ACTIVE);
    assert_eq!(d.kind_on_top(t), Err(NOT_ACTIVE));
    assert_eq!(d.new_task(Some(t)), Err(NOT_ACTIVE));
    assert_eq!(d.finish(t), Err(NOT_ACTIVE));
    assert_eq!(d.take_error(t), Err(NOT_ACTIVE));
    assert_eq!(d.fail(t, failure("Error", "x")), Err(NOT_ACTIVE));
    assert_eq!(d.text(99, "y"), Err(NOT_ACTIVE));

    let e = d.new_task(None).unwrap();
    d.unknown_element(e).unwrap();
    assert_eq!(d.take_error(e).unwrap(), EvalError::UnknownElement);
    assert_eq!(d.take_error(e), Err(NOT_ACTIVE));
    assert_eq!(d.live_tasks(), 0);
}

#[test]
fn component_spans_are_numbered_in_entry_order_and_nest() {
    let item = comp("Item", |_| text("i"));
    let body = comp("Body", move |_| arr(vec![item.clone(), text("b")]));
    let app = comp("App", move |_| {
        arr(vec![comp("Header", |_| text("h")), body.clone()])
    });
    let mut run = Run::traced(Limits::default());
    let prim = node(NodeKind::Primitive(2), "Prim", |_| {
        comp("InPrim", |_| text("p"))
    });
    assert_eq!(run.eval(arr(vec![app, prim])).unwrap(), "hibp");
    run.close_root(None);
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start trace-1<trace-0 App",
            "start trace-2<trace-1 Header",
            "end trace-2 ok",
            "start trace-3<trace-1 Body",
            "start trace-4<trace-3 Item",
            "end trace-4 ok",
            "end trace-3 ok",
            "end trace-1 ok",
            // Primitives open no span of their own here.
            "start trace-5<trace-0 InPrim",
            "end trace-5 ok",
            "end trace-0 ok",
        ]
    );
    let seqs: Vec<u64> = run
        .records
        .iter()
        .map(|r| r["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=12).collect::<Vec<u64>>());
    let start = &run.records[1];
    assert_eq!(start["kind"], "component");
    assert_eq!(start["attributes"], json!({}));
    assert_eq!(start["sensitive"], json!({}));
    assert!(start["timestamp"].as_f64().unwrap() > 1.6e12);
    let end = &run.records[8];
    assert_eq!(end["name"], "App");
    assert_eq!(end["parentSpanId"], "trace-0");
    assert!(end["durationMs"].as_f64().unwrap() >= 0.0);
    assert_eq!(run.records[0]["kind"], "evaluation");
    assert!(run.records[0].get("parentSpanId").is_none());
}

#[test]
fn sequence_is_monotonic_across_drains() {
    let mut d = Domain::new(Limits::default());
    d.set_tracing(true);
    d.open_root();
    let t = d.new_task(None).unwrap();
    let s = d.node(t, 1, NodeKind::Component, "A").unwrap();
    assert!(s.trace_pending);
    let first: Vec<Value> = d
        .drain_trace()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert!(d.drain_trace().is_empty());
    assert_eq!(d.current_span(t).unwrap().to_string(), "trace-1");
    let s = d.node(t, 2, NodeKind::Component, "B").unwrap();
    assert!(s.trace_pending);
    assert_eq!(d.text(t, "x").unwrap().height, 0);
    d.finish(t).unwrap();
    d.close_root(None);
    let second: Vec<Value> = d
        .drain_trace()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    let seq = |v: &[Value]| {
        v.iter()
            .map(|r| r["sequence"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(seq(&first), [1, 2]);
    assert_eq!(seq(&second), [3, 4, 5, 6]);
    assert_eq!(
        summary(&second),
        [
            "start trace-2<trace-1 B",
            "end trace-2 ok",
            "end trace-1 ok",
            "end trace-0 ok"
        ]
    );
}

#[test]
fn driver_failure_closes_open_spans_with_the_error() {
    let mut run = Run::traced(Limits::default());
    let thrower = comp("Thrower", |_| V::Throw("boom".into()));
    let app = comp("App", move |_| {
        arr(vec![comp("Fine", |_| text("f")), thrower.clone()])
    });
    assert_eq!(run.eval(app), Err(Failure::Thrown("boom".into())));
    run.close_root(Some(failure("Error", "boom")));
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start trace-1<trace-0 App",
            "start trace-2<trace-1 Fine",
            "end trace-2 ok",
            "start trace-3<trace-1 Thrower",
            "end trace-3 error",
            "end trace-1 error",
            "end trace-0 error",
        ]
    );
    for r in &run.records[5..] {
        assert_eq!(r["attributes"], json!({ "error.type": "Error" }));
        assert_eq!(r["sensitive"], json!({ "error.message": "boom" }));
    }
    assert_eq!(run.records[3]["attributes"], json!({}));
    assert_eq!(run.records[3]["sensitive"], json!({}));
    assert_eq!(run.records[6]["name"], "App");
    assert_eq!(run.records[6]["kind"], "component");
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn engine_rejection_closes_open_spans_as_evaluation_error() {
    let mut run = Run::traced(Limits {
        max_depth: 2,
        ..Limits::default()
    });
    let err = run.eval(chain(3, "x")).unwrap_err();
    assert_eq!(err.message(), "AML evaluation exceeded maxDepth 2");
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start trace-1<trace-0 C1",
            "start trace-2<trace-1 C2",
            "end trace-2 error",
            "end trace-1 error",
        ]
    );
    for r in &run.records[3..] {
        assert_eq!(r["attributes"]["error.type"], "EvaluationError");
        assert_eq!(
            r["sensitive"]["error.message"],
            "AML evaluation exceeded maxDepth 2"
        );
        assert!(r["attributes"].get("error.message").is_none());
        assert!(r["sensitive"].get("error.type").is_none());
    }
}

#[test]
fn nested_task_spans_are_children_of_the_calling_component() {
    let spans = Rc::new(RefCell::new(Vec::new()));
    let sp = spans.clone();
    let inner = comp("Inner", move |ctx| {
        sp.borrow_mut().push(ctx.current_span());
        arr(vec![text("i"), V::Throw("inner".into())])
    });
    let sp = spans.clone();
    let caller = comp("Caller", move |ctx| {
        sp.borrow_mut().push(ctx.current_span());
        let nested = ctx.run.d.new_task(Some(ctx.task)).unwrap();
        sp.borrow_mut()
            .push(ctx.run.d.current_span(nested).unwrap().to_string());
        let out = ctx.run.drive(nested, inner.clone());
        assert_eq!(out, Err(Failure::Thrown("inner".into())));
        text("c")
    });
    let mut run = Run::traced(Limits::default());
    assert_eq!(
        run.eval(arr(vec![caller, comp("After", |_| text("a"))]))
            .unwrap(),
        "ca"
    );
    run.close_root(None);
    assert_eq!(*spans.borrow(), ["trace-1", "trace-1", "trace-2"]);
    assert_eq!(
        summary(&run.records),
        [
            "start trace-0<- evaluate",
            "start trace-1<trace-0 Caller",
            "start trace-2<trace-1 Inner",
            // The nested task failed: only its own spans end with the error.
            "end trace-2 error",
            "end trace-1 ok",
            "start trace-3<trace-0 After",
            "end trace-3 ok",
            "end trace-0 ok",
        ]
    );
}

#[test]
fn disabled_tracing_records_nothing() {
    let mut run = Run::new(Limits::default());
    run.d.open_root();
    let app = comp("App", |ctx| {
        let inner = ctx.evaluate(comp("Inner", |_| text("i"))).unwrap();
        arr(vec![text(&inner), comp("Deep", |_| chain(2, "d"))])
    });
    assert_eq!(run.eval(app).unwrap(), "id");
    run.eval(comp("Bad", |_| V::Invalid("bigint"))).unwrap_err();
    run.eval(comp("Throws", |_| V::Throw("x".into())))
        .unwrap_err();
    run.close_root(Some(failure("Error", "x")));
    // The driver asserted `trace_pending == false` on every step; nothing was buffered.
    assert!(run.records.is_empty());
    assert!(run.d.drain_trace().is_empty());
}

#[test]
fn tracing_enabled_mid_run_reports_the_end_of_spans_already_open() {
    let mut d = Domain::new(Limits::default());
    d.open_root();
    let t = d.new_task(None).unwrap();
    let s = d.node(t, 1, NodeKind::Component, "Outer").unwrap();
    assert!(!s.trace_pending);
    // A listener arrives while trace-0 and trace-1 are open.
    d.set_tracing(true);
    let s = d.node(t, 2, NodeKind::Component, "Inner").unwrap();
    assert!(s.trace_pending);
    assert_eq!(d.text(t, "x").unwrap().height, 0);
    d.finish(t).unwrap();
    d.close_root(None);
    let records: Vec<Value> = d
        .drain_trace()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(
        summary(&records),
        [
            "start trace-2<trace-1 Inner",
            "end trace-2 ok",
            "end trace-1 ok",
            "end trace-0 ok"
        ]
    );
    assert_eq!(records[2]["name"], "Outer");
    assert_eq!(records[2]["parentSpanId"], "trace-0");
    assert_eq!(records[2]["kind"], "component");
    assert_eq!(records[3]["kind"], "evaluation");
}
