//! Evaluation semantics driven through the public `Domain` API: text assembly, cycles,
//! rejected values, maxDepth and stack safety.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use aml_engine::{Domain, EvalError, Limits, NodeKind, Op, Step};
use common::*;

fn eval(v: V) -> Result<String, Failure> {
    let mut run = Run::new(Limits::default());
    let out = run.eval(v);
    assert_eq!(run.d.live_tasks(), 0, "the task slot must be released");
    out
}

fn eval_with_depth(max_depth: u64, v: V) -> Result<String, Failure> {
    let mut run = Run::new(Limits {
        max_depth,
        ..Limits::default()
    });
    run.eval(v)
}

fn engine_err(r: Result<String, Failure>) -> EvalError {
    match r {
        Err(Failure::Engine(e)) => e,
        other => panic!("expected an engine error, got {other:?}"),
    }
}

fn step(op: Op, height: u32) -> Step {
    Step {
        op,
        height,
        trace_pending: false,
    }
}

#[test]
fn strings_concatenate_in_authored_order() {
    assert_eq!(eval(text("hello")).unwrap(), "hello");
    assert_eq!(
        eval(arr(vec![text("a"), text("b"), text("c")])).unwrap(),
        "abc"
    );
    assert_eq!(
        eval(arr(vec![text("c"), text("b"), text("a")])).unwrap(),
        "cba"
    );
}

#[test]
fn numbers_are_plain_text_from_the_driver() {
    let v = arr(vec![
        V::Num(1.0),
        text(" + "),
        V::Num(2.5),
        text(" = "),
        V::Num(3.5),
    ]);
    assert_eq!(eval(v).unwrap(), "1 + 2.5 = 3.5");
}

#[test]
fn empty_values_add_nothing() {
    assert_eq!(eval(V::Empty).unwrap(), "");
    assert_eq!(eval(arr(vec![])).unwrap(), "");
    let v = arr(vec![
        V::Empty,
        text("x"),
        arr(vec![]),
        V::Empty,
        text("y"),
        V::Empty,
    ]);
    assert_eq!(eval(v).unwrap(), "xy");
    assert_eq!(eval(comp("Nothing", |_| V::Empty)).unwrap(), "");
}

#[test]
fn nested_arrays_flatten_without_separator() {
    let v = arr(vec![
        text("a"),
        arr(vec![text("b"), arr(vec![arr(vec![text("c")])]), text("d")]),
        arr(vec![arr(vec![]), text("e")]),
    ]);
    assert_eq!(eval(v).unwrap(), "abcde");
}

#[test]
fn component_output_lands_where_the_node_stands() {
    let log = Rc::new(RefCell::new(Vec::<&str>::new()));
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let inner = comp("Inner", move |_| {
        l2.borrow_mut().push("Inner");
        text("i")
    });
    let last = comp("Last", move |_| {
        l3.borrow_mut().push("Last");
        arr(vec![text("L"), V::Num(9.0)])
    });
    let outer = comp("Outer", move |_| {
        l1.borrow_mut().push("Outer");
        arr(vec![text("("), inner.clone(), text(")")])
    });
    let v = arr(vec![text("<"), outer, text("|"), last, text(">")]);
    assert_eq!(eval(v).unwrap(), "<(i)|L9>");
    assert_eq!(*log.borrow(), ["Outer", "Inner", "Last"]);
}

#[test]
fn raw_protocol_steps_report_op_and_height() {
    let mut d = Domain::new(Limits::default());
    let t = d.new_task(None).unwrap();
    assert_eq!(d.array(t, 1, 2).unwrap(), step(Op::Read, 1));
    assert_eq!(d.text(t, "a").unwrap(), step(Op::Read, 1));
    assert_eq!(
        d.node(t, 2, NodeKind::Component, "C").unwrap(),
        step(Op::Invoke, 2)
    );
    assert_eq!(d.depth(t).unwrap(), 1);
    assert_eq!(d.array(t, 3, 1).unwrap(), step(Op::Read, 3));
    assert_eq!(
        d.node(t, 4, NodeKind::Primitive(7), "P").unwrap(),
        step(Op::Primitive, 4)
    );
    assert_eq!(d.kind_on_top(t).unwrap(), Some(NodeKind::Primitive(7)));
    assert_eq!(d.depth(t).unwrap(), 2);
    // The primitive's output completes P, the inner array, C and the outer array at once.
    assert_eq!(d.text(t, "b").unwrap(), step(Op::Done, 0));
    assert_eq!(d.finish(t).unwrap(), "ab");
    assert_eq!(d.live_tasks(), 0);
}

#[test]
fn array_cycle_is_rejected() {
    let a = arr(vec![text("x")]);
    let V::Array(def) = &a else { unreachable!() };
    def.items.borrow_mut().push(a.clone());
    let err = engine_err(eval(a.clone()));
    assert_eq!(err, EvalError::ArrayCycle);
    assert_eq!(err.to_string(), "AML arrays cannot contain cycles");

    // Indirect: a -> [b] -> [a], reached through a component.
    let b = arr(vec![]);
    let a2 = arr(vec![b.clone()]);
    let V::Array(bdef) = &b else { unreachable!() };
    let back = a2.clone();
    bdef.items
        .borrow_mut()
        .push(comp("Back", move |_| back.clone()));
    assert_eq!(engine_err(eval(a2)), EvalError::ArrayCycle);
}

#[test]
fn node_cycle_is_rejected() {
    let v = comp("Self", |ctx| V::Node(ctx.this.clone()));
    let err = engine_err(eval(v));
    assert_eq!(err, EvalError::NodeCycle);
    assert_eq!(err.to_string(), "AML nodes cannot contain cycles");

    // Indirect: A renders [B], B renders A.
    let slot: Rc<RefCell<Option<V>>> = Rc::new(RefCell::new(None));
    let s = slot.clone();
    let b = comp("B", move |_| s.borrow().clone().unwrap());
    let a = comp("A", move |_| arr(vec![text("a"), b.clone()]));
    *slot.borrow_mut() = Some(a.clone());
    assert_eq!(engine_err(eval(a)), EvalError::NodeCycle);
}

#[test]
fn same_node_twice_as_siblings_is_not_a_cycle() {
    let n = comp("N", |_| text("n"));
    assert_eq!(
        eval(arr(vec![n.clone(), text("-"), n.clone()])).unwrap(),
        "n-n"
    );
    // Also when the second use is in a sibling subtree, and when the node renders an array.
    let m = comp("M", |_| arr(vec![text("m"), text("!")]));
    let v = arr(vec![m.clone(), arr(vec![m.clone(), n.clone()]), m]);
    assert_eq!(eval(v).unwrap(), "m!m!nm!");
}

#[test]
fn same_array_twice_as_siblings_is_not_a_cycle() {
    let inner = arr(vec![text("i"), text("j")]);
    assert_eq!(
        eval(arr(vec![inner.clone(), inner.clone()])).unwrap(),
        "ijij"
    );
    let i2 = inner.clone();
    let c = comp("C", move |_| i2.clone());
    let v = arr(vec![c.clone(), inner.clone(), arr(vec![inner]), c]);
    assert_eq!(eval(v).unwrap(), "ijijijij");
}

#[test]
fn unrenderable_values_are_rejected() {
    let err = engine_err(eval(arr(vec![text("a"), V::Invalid("object"), text("b")])));
    assert_eq!(err, EvalError::CannotRender("object".into()));
    assert_eq!(err.to_string(), "AML cannot render a value of type object");
    let err = engine_err(eval(comp("Fn", |_| V::Invalid("function"))));
    assert_eq!(
        err.to_string(),
        "AML cannot render a value of type function"
    );
    assert_eq!(err.js_name(), "EvaluationError");
}

#[test]
fn unknown_elements_are_rejected() {
    let err = engine_err(eval(arr(vec![text("a"), comp("C", |_| V::Unknown)])));
    assert_eq!(err, EvalError::UnknownElement);
    assert_eq!(
        err.to_string(),
        "AML does not support intrinsic or unknown JSX element types"
    );
}

#[test]
fn default_max_depth_allows_sixteen_components() {
    assert_eq!(Limits::default().max_depth, 16);
    assert_eq!(eval(chain(16, "deep")).unwrap(), "deep");
    let err = engine_err(eval(chain(17, "deep")));
    assert_eq!(err, EvalError::MaxDepth(16));
    assert_eq!(err.to_string(), "AML evaluation exceeded maxDepth 16");
}

#[test]
fn custom_max_depth_counts_components_and_primitives() {
    assert_eq!(eval_with_depth(3, chain(3, "ok")).unwrap(), "ok");
    let err = engine_err(eval_with_depth(3, chain(4, "ok")));
    assert_eq!(err.to_string(), "AML evaluation exceeded maxDepth 3");
    let prim = node(NodeKind::Primitive(0), "P", |_| chain(2, "p"));
    assert_eq!(eval_with_depth(3, prim.clone()).unwrap(), "p");
    assert_eq!(engine_err(eval_with_depth(2, prim)), EvalError::MaxDepth(2));
}

#[test]
fn depth_is_reported_per_component() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    fn link(i: u64, seen: Rc<RefCell<Vec<u64>>>) -> V {
        comp("D", move |ctx| {
            seen.borrow_mut().push(ctx.depth());
            if i < 4 {
                arr(vec![link(i + 1, seen.clone()), text(".")])
            } else {
                text("x")
            }
        })
    }
    assert_eq!(eval(link(1, seen.clone())).unwrap(), "x...");
    assert_eq!(*seen.borrow(), [1, 2, 3, 4]);
}

#[test]
fn arrays_add_no_depth() {
    // Every component wraps its child in three arrays: 16 components, 48 arrays.
    fn link(i: usize) -> V {
        comp("A", move |_| {
            let child = if i < 16 { link(i + 1) } else { text("leaf") };
            arr(vec![arr(vec![arr(vec![child])])])
        })
    }
    assert_eq!(eval(link(1)).unwrap(), "leaf");
    let mut v = comp("One", |_| text("1"));
    for _ in 0..100 {
        v = arr(vec![v]);
    }
    assert_eq!(eval_with_depth(1, v).unwrap(), "1");
}

#[test]
fn max_depth_zero_is_unlimited() {
    assert_eq!(eval_with_depth(0, chain(500, "bottom")).unwrap(), "bottom");
}

#[test]
fn wide_array_of_strings_is_stack_safe() {
    let items: Vec<V> = (0..100_000)
        .map(|i| text(if i % 2 == 0 { "a" } else { "b" }))
        .collect();
    let out = eval(arr(items)).unwrap();
    assert_eq!(out.len(), 100_000);
    assert_eq!(out, "ab".repeat(50_000));
}

#[test]
fn deep_component_chain_is_stack_safe() {
    assert_eq!(
        eval_with_depth(0, chain(10_000, "bottom")).unwrap(),
        "bottom"
    );
    // Deep arrays as well.
    let mut v = text("core");
    for _ in 0..10_000 {
        v = arr(vec![v]);
    }
    assert_eq!(eval(v).unwrap(), "core");
}
