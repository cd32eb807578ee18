//! `<Loop>` in the engine (INVENTORY LP-1, RT-1, §2.4): render-task selection of exactly one
//! Agent, the `aml_set_state` grant, Loop-specific cycle messages, the Loop-in-structured
//! rule, and the evaluation-wide `maxStateTransitions` budget with `loop.transition`.

mod common;

use aml_engine::{
    Domain, EvalError, Limits, NodeKind, Op, Policy, Primitive, ScopeEntry, SpanKind, TaskId,
    STATE_TOOL,
};
use common::*;
use serde_json::{json, Value};

const TOOL_REF: u32 = 7;

/// Evaluates `v` as a Loop render task whose state Tool is `TOOL_REF`.
fn render(run: &mut Run, v: V) -> Result<String, Failure> {
    let task = run.d.new_task(None).unwrap();
    run.d.set_loop_render(task, TOOL_REF).unwrap();
    run.drive(task, v)
}

fn not_one() -> Result<String, Failure> {
    Err(Failure::Engine(EvalError::LoopRenderNotOneAgent))
}

fn cyclic_array() -> V {
    let a = arr(vec![]);
    if let V::Array(def) = &a {
        def.items.borrow_mut().push(a.clone());
    }
    a
}

fn self_returning() -> V {
    comp("Self", |ctx| V::Node(ctx.this.clone()))
}

#[test]
fn the_selected_agent_gets_the_state_tool_first_and_its_text_is_the_result() {
    let mut run = Run::new(Limits::default());
    let tree = comp("Prompt", |_| {
        wrapper(
            Primitive::Context,
            arr(vec![agent(arr(vec![tool("lookup", 1), text("go")]))]),
        )
    });
    assert_eq!(render(&mut run, tree).unwrap(), "[go]");
    let tools = &run.plans[0].tools;
    assert_eq!(
        tools,
        &vec![(STATE_TOOL.to_string(), TOOL_REF), ("lookup".into(), 1)]
    );
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn child_agents_inside_the_selected_agent_are_ordinary_and_do_not_inherit_the_tool() {
    let mut run = Run::new(Limits::default());
    let tree = agent(arr(vec![
        text("a "),
        agent(arr(vec![tool(STATE_TOOL, 2), text("child")])),
    ]));
    assert_eq!(render(&mut run, tree).unwrap(), "[a [child]]");
    assert_eq!(run.plans[0].tools, vec![(STATE_TOOL.to_string(), 2)]);
    assert_eq!(run.plans[1].tools, vec![(STATE_TOOL.to_string(), TOOL_REF)]);
}

#[test]
fn an_authored_tool_of_that_name_is_a_duplicate_and_the_allowlist_never_sees_the_grant() {
    let mut run = Run::new(Limits::default());
    let tree = agent(arr(vec![tool(STATE_TOOL, 2), text("x")]));
    assert_eq!(
        render(&mut run, tree),
        Err(Failure::Engine(EvalError::DuplicateTool(STATE_TOOL.into())))
    );
    let policy = Policy {
        allowed_tools: Some(vec![]),
        ..Policy::default()
    };
    let mut run = Run::with_policy(Limits::default(), policy);
    assert_eq!(render(&mut run, agent(text("x"))).unwrap(), "[x]");
    assert_eq!(run.plans[0].tools.len(), 1);
}

#[test]
fn text_other_primitives_and_agent_counts_other_than_one_are_rejected() {
    let cases = vec![
        arr(vec![text(" "), agent(text("a"))]),
        arr(vec![agent(text("a")), V::Num(1.0)]),
        V::Empty,
        arr(vec![]),
        arr(vec![agent(text("a")), agent(text("b"))]),
        wrapper(Primitive::Sandbox, agent(text("a"))),
        tool("lookup", 1),
        comp("Inner", |_| wrapper(Primitive::Loop, V::Empty)),
    ];
    for case in cases {
        let mut run = Run::new(Limits::default());
        assert_eq!(render(&mut run, case), not_one());
        assert_eq!(run.d.live_tasks(), 0);
    }
}

#[test]
fn cycles_outside_the_agent_use_loop_messages_and_inside_it_the_ordinary_ones() {
    let mut run = Run::new(Limits::default());
    let loop_array = Err(Failure::Engine(EvalError::LoopRenderArrayCycle));
    assert_eq!(render(&mut run, cyclic_array()), loop_array);
    let loop_node = Err(Failure::Engine(EvalError::LoopRenderNodeCycle));
    assert_eq!(render(&mut run, self_returning()), loop_node);
    let inside = agent(cyclic_array());
    let ordinary = Err(Failure::Engine(EvalError::ArrayCycle));
    assert_eq!(render(&mut run, inside), ordinary);
    assert_eq!(
        EvalError::LoopRenderNodeCycle.to_string(),
        "<Loop> render nodes cannot contain cycles"
    );
    assert_eq!(
        EvalError::LoopRenderArrayCycle.to_string(),
        "<Loop> render arrays cannot contain cycles"
    );
    assert_eq!(
        EvalError::LoopRenderNotOneAgent.to_string(),
        "<Loop> render must resolve to exactly one <Agent>"
    );
}

#[test]
fn a_loop_anywhere_in_a_structured_task_is_rejected() {
    let trees = [
        wrapper(Primitive::Loop, V::Empty),
        agent(arr(vec![text("x"), wrapper(Primitive::Loop, V::Empty)])),
    ];
    for tree in trees {
        let mut run = Run::new(Limits::default());
        let task = run.d.new_task(None).unwrap();
        run.d.set_structured(task).unwrap();
        assert_eq!(
            run.drive(task, tree),
            Err(Failure::Engine(EvalError::StructuredNotOneAgent))
        );
    }
}

/// Opens `<Loop>` on a root task and stops at its completion, as the facade does.
fn open_loop(d: &mut Domain) -> TaskId {
    let task = d.new_task(None).unwrap();
    let step = d
        .node(task, 9_000, NodeKind::Primitive(Primitive::Loop as u8), "")
        .unwrap();
    assert!(step.is(Op::Primitive));
    let entry = ScopeEntry {
        kind: SpanKind::Loop,
        name: "Loop".into(),
        resource: true,
        attributes: vec![],
        sensitive: vec![],
        capture: false,
    };
    assert!(d.enter_scope(task, entry).unwrap().is(Op::Children));
    assert!(d.empty(task).unwrap().is(Op::Complete));
    task
}

fn records(d: &mut Domain) -> Vec<Value> {
    d.drain_trace()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect()
}

#[test]
fn transitions_emit_loop_transition_on_the_loop_span_and_spend_the_budget() {
    let limits = Limits {
        max_state_transitions: 2,
        ..Limits::default()
    };
    let mut d = Domain::new(limits);
    d.set_tracing(true);
    d.open_root();
    let task = open_loop(&mut d);
    assert_eq!(d.loop_transition(task, "r", 1), Ok(1));
    assert_eq!(d.loop_transition(task, "r", 2), Ok(2));
    let error = d.loop_transition(task, "r", 3).unwrap_err();
    assert_eq!(error, EvalError::MaxStateTransitions(2, "r".into(), 3));
    assert_eq!(
        error.to_string(),
        "AML evaluation exceeded maxStateTransitions 2 at Loop \"r\" iteration 3"
    );
    let points: Vec<Value> = records(&mut d)
        .into_iter()
        .filter(|r| r["type"] == "event")
        .collect();
    assert_eq!(points.len(), 2);
    assert_eq!(points[1]["name"], "loop.transition");
    assert_eq!(points[1]["spanId"], "span-1");
    assert_eq!(points[1]["parentSpanId"], "trace-0");
    assert_eq!(
        points[1]["attributes"],
        json!({"iteration": 2.0, "name": "r", "transition": 2.0})
    );
    // The Loop closes normally afterwards.
    assert!(d
        .scope_done(task, "out", vec![], vec![])
        .unwrap()
        .is(Op::Done));
    assert_eq!(d.finish(task).unwrap(), "out");
}

#[test]
fn the_budget_is_evaluation_wide_and_zero_is_unlimited() {
    let mut d = Domain::new(Limits {
        max_state_transitions: 3,
        ..Limits::default()
    });
    let first = open_loop(&mut d);
    let second = open_loop(&mut d);
    assert_eq!(d.loop_transition(first, "a", 1), Ok(1));
    assert_eq!(d.loop_transition(second, "b", 1), Ok(2));
    assert_eq!(d.loop_transition(first, "a", 2), Ok(3));
    assert!(d.loop_transition(second, "b", 2).is_err());

    let mut d = Domain::new(Limits {
        max_state_transitions: 0,
        ..Limits::default()
    });
    let task = open_loop(&mut d);
    for i in 1..=100 {
        assert_eq!(d.loop_transition(task, "u", i), Ok(i));
    }
    assert_eq!(Limits::default().max_state_transitions, 16);
}

#[test]
fn a_transition_outside_a_completing_loop_is_a_protocol_error() {
    let mut d = Domain::new(Limits::default());
    let task = d.new_task(None).unwrap();
    assert!(matches!(
        d.loop_transition(task, "x", 1),
        Err(EvalError::Invariant(_))
    ));
}

#[test]
fn the_render_task_shares_the_depth_limit_with_the_loop() {
    let mut d = Domain::new(Limits {
        max_depth: 2,
        ..Limits::default()
    });
    let task = open_loop(&mut d);
    let child = d.new_task(Some(task)).unwrap();
    d.set_loop_render(child, TOOL_REF).unwrap();
    let component = NodeKind::Component;
    assert!(d.node(child, 9_001, component, "C").unwrap().is(Op::Invoke));
    let agent_kind = NodeKind::Primitive(Primitive::Agent as u8);
    assert!(d.node(child, 9_002, agent_kind, "").unwrap().is(Op::Error));
    assert_eq!(d.take_error(child).unwrap(), EvalError::MaxDepth(2));
}

/// A provider that records nothing but must never be reached.
fn unreachable_provider(_: &PlanRecord) -> Result<String, String> {
    panic!("a provider ran before the Loop render selection was checked")
}

#[test]
fn selection_is_checked_before_any_provider_runs() {
    // Each tree has exactly one problem, after (or around) an Agent that would be valid.
    let cases = vec![
        arr(vec![agent(text("a")), text("trailing")]),
        arr(vec![agent(text("a")), agent(text("b"))]),
        arr(vec![
            agent(agent(text("child"))),
            comp("Late", |_| text("x")),
        ]),
        arr(vec![
            comp("Wrap", |_| arr(vec![agent(text("a"))])),
            wrapper(Primitive::Sandbox, V::Empty),
        ]),
        arr(vec![agent(text("a")), comp("Second", |_| agent(text("b")))]),
    ];
    for case in cases {
        let mut run = Run::new(Limits::default()).with_provider(unreachable_provider);
        assert_eq!(render(&mut run, case), not_one());
        assert!(run.plans.is_empty());
        assert_eq!(run.d.live_tasks(), 0);
    }
}

#[test]
fn later_siblings_run_before_the_parked_agent_and_the_result_is_its_text() {
    let calls = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let seen = calls.clone();
    let late = comp("Late", move |_| {
        seen.borrow_mut().push("late component".into());
        V::Empty
    });
    let seen = calls.clone();
    let mut run = Run::new(Limits::default()).with_provider(move |plan| {
        seen.borrow_mut().push(format!("provider {}", plan.prompt));
        Ok("done".into())
    });
    let tree = arr(vec![V::Empty, comp("Wrap", |_| agent(text("go"))), late]);
    assert_eq!(render(&mut run, tree).unwrap(), "done");
    assert_eq!(*calls.borrow(), vec!["late component", "provider go"]);
    assert_eq!(run.plans[0].tools[0].0, STATE_TOOL);
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn the_component_that_returned_the_agent_owns_its_span_and_closes_after_it() {
    let mut run = Run::traced(Limits::default());
    let tree = arr(vec![
        comp("Outer", |_| arr(vec![comp("Inner", |_| agent(text("go")))])),
        comp("After", |_| V::Empty),
    ]);
    assert_eq!(render(&mut run, tree).unwrap(), "[go]");
    assert_eq!(
        summary(&run.records),
        vec![
            "start trace-0<- evaluate",
            "start trace-1<trace-0 Outer",
            "start trace-2<trace-1 Inner",
            "start trace-3<trace-0 After",
            "end trace-3 ok",
            "start span-1<trace-2 Agent",
            "event span-1",
            "end span-1 ok",
            "end trace-2 ok",
            "end trace-1 ok",
        ]
    );
}

#[test]
fn a_failure_after_parking_closes_the_deferred_spans_innermost_first() {
    let mut run = Run::traced(Limits::default());
    let tree = arr(vec![
        comp("Outer", |_| arr(vec![comp("Inner", |_| agent(text("go")))])),
        comp("After", |_| text("trailing")),
    ]);
    assert_eq!(render(&mut run, tree), not_one());
    assert_eq!(
        summary(&run.records),
        vec![
            "start trace-0<- evaluate",
            "start trace-1<trace-0 Outer",
            "start trace-2<trace-1 Inner",
            "start trace-3<trace-0 After",
            "end trace-3 error",
            "end trace-2 error",
            "end trace-1 error",
        ]
    );
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn the_resumed_agent_keeps_its_depth_and_ancestor_identities() {
    // Depth: the Agent is found two components deep; inside it, one more level fails.
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    let mut run = Run::new(limits);
    let deep = comp("A", |_| comp("B", |_| agent(comp("C", |_| text("x")))));
    assert_eq!(
        render(&mut run, deep),
        Err(Failure::Engine(EvalError::MaxDepth(3)))
    );
    // Identities: an array that contains the Agent reappears inside the Agent's prompt.
    let outer = arr(vec![]);
    if let V::Array(def) = &outer {
        let again = outer.clone();
        def.items.borrow_mut().push(agent(again));
    }
    let mut run = Run::new(Limits::default());
    assert_eq!(
        render(&mut run, outer),
        Err(Failure::Engine(EvalError::ArrayCycle))
    );
}

#[test]
fn parking_out_of_order_is_an_invariant_error() {
    let mut d = Domain::new(Limits::default());
    let task = d.new_task(None).unwrap();
    d.set_loop_render(task, TOOL_REF).unwrap();
    assert!(d.loop_park(task).unwrap().is(Op::Error));
    let task = d.new_task(None).unwrap();
    assert!(d.loop_resume(task).unwrap().is(Op::Error));
}
