//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4), part 1: capture
//! frames routing text to the Agent / System / FollowUp channels, prompt trimming and system
//! joining.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use aml_engine::AgentEntry;
use common::*;

// ---------------------------------------------------------------------------------------
// Text routing
// ---------------------------------------------------------------------------------------

#[test]
fn agent_text_goes_to_the_prompt_and_the_result_lands_where_the_agent_stood() {
    let mut run = Run::new(limits());
    let tree = arr(vec![
        text("before|"),
        agent(arr(vec![text("  a"), V::Num(1.0), V::Empty, text("b  ")])),
        text("|after"),
    ]);
    assert_eq!(run.eval(tree).unwrap(), "before|[a1b]|after");
    assert_eq!(run.plans.len(), 1);
    assert_eq!(run.plans[0].prompt, "a1b");
    assert_eq!(run.plans[0].span, "span-1");
    assert_eq!(run.plans[0].parent, "trace-0");
    assert_eq!(run.plans[0].provider.as_deref(), Some("p"));
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn child_agents_resolve_first_and_land_at_their_authored_position() {
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        text("A"),
        agent(arr(vec![text("B"), agent(text("C"))])),
        text("D"),
        agent(text("E")),
        text("F"),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[A[B[C]]D[E]F]");
    let order: Vec<(&str, &str, &str)> = run
        .plans
        .iter()
        .map(|p| (p.span.as_str(), p.parent.as_str(), p.prompt.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("span-3", "span-2", "C"),
            ("span-2", "span-1", "B[C]"),
            ("span-4", "span-1", "E"),
            ("span-1", "trace-0", "A[B[C]]D[E]F"),
        ]
    );
}

#[test]
fn text_through_components_and_arrays_reaches_the_nearest_agent() {
    let mut run = Run::new(limits());
    let inner = comp("Inner", |_| arr(vec![text("x"), agent(text("y"))]));
    let tree = agent(comp("Outer", move |_| arr(vec![inner.clone(), text("z")])));
    assert_eq!(run.eval(tree).unwrap(), "[x[y]z]");
    // The child Agent's parent span is the Inner component (trace-2 under trace-1).
    assert_eq!(run.plans[0].parent, "trace-2");
}

#[test]
fn system_text_goes_to_the_system_channel_and_follow_ups_to_their_own() {
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        system(text(" rules ")),
        text(" ask "),
        system(arr(vec![text("more"), V::Num(2.0)])),
        follow_up(text("  again ")),
        text("  \n "),
        follow_up(arr(vec![text("and "), text("again")])),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[ask]");
    let plan = &run.plans[0];
    assert_eq!(plan.prompt, "ask");
    assert_eq!(plan.system, "rules\nmore2");
    assert_eq!(plan.follow_ups, ["again", "and again"]);
}

#[test]
fn an_agent_inside_system_runs_first_and_becomes_system_text() {
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        system(arr(vec![text("use: "), agent(text("policy"))])),
        text("task"),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[task]");
    assert_eq!(run.plans[0].prompt, "policy");
    assert_eq!(run.plans[0].system, "");
    // The inner Agent's enclosing span is the System span.
    assert_eq!(run.plans[0].parent, "trace-1");
    assert_eq!(run.plans[1].system, "use: [policy]");
    assert_eq!(run.plans[1].prompt, "task");
}

#[test]
fn an_agent_inside_a_follow_up_contributes_to_that_follow_up() {
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        text("p"),
        follow_up(arr(vec![text("refine with "), agent(text("advice"))])),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    assert_eq!(run.plans[1].follow_ups, ["refine with [advice]"]);
    assert_eq!(run.plans[1].prompt, "p");
}

#[test]
fn descriptors_belong_to_their_nearest_agent_only() {
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        system(text("outer system")),
        agent(arr(vec![
            system(text("inner system")),
            text("i"),
            follow_up(text("inner turn")),
            tool("inner_tool", 7),
        ])),
        follow_up(text("outer turn")),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[[i]]");
    let inner = &run.plans[0];
    assert_eq!(inner.system, "inner system");
    assert_eq!(inner.follow_ups, ["inner turn"]);
    assert_eq!(inner.tools, [("inner_tool".to_string(), 7)]);
    let outer = &run.plans[1];
    assert_eq!(outer.system, "outer system");
    assert_eq!(outer.follow_ups, ["outer turn"]);
    assert!(outer.tools.is_empty());
}

#[test]
fn a_nested_task_does_not_inherit_the_calling_agents_channels() {
    let mut run = Run::new(limits());
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let caller = comp("Caller", move |ctx| {
        s.borrow_mut()
            .push(ctx.evaluate(system(text("x"))).map_err(|e| e.message()));
        s.borrow_mut()
            .push(ctx.evaluate(follow_up(text("x"))).map_err(|e| e.message()));
        s.borrow_mut()
            .push(ctx.evaluate(tool("t", 0)).map_err(|e| e.message()));
        // Plain text of a nested task is that task's output, not the Agent's prompt.
        s.borrow_mut()
            .push(ctx.evaluate(text("nested")).map_err(|e| e.message()));
        text("c")
    });
    assert_eq!(run.eval(agent(caller)).unwrap(), "[c]");
    assert_eq!(
        *seen.borrow(),
        [
            Err("<System> is only valid inside <Agent>".to_string()),
            Err("<FollowUp> is only valid inside <Agent>".to_string()),
            Err("<Tool> is only valid inside <Agent>".to_string()),
            Ok("nested".to_string()),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Trimming and the system channel
// ---------------------------------------------------------------------------------------

#[test]
fn the_prompt_is_trimmed_like_javascript() {
    let mut run = Run::new(limits());
    run.eval(agent(text("\u{FEFF}\u{3000} p \u{2029}")))
        .unwrap();
    run.eval(agent(text("\u{85}q\u{85}"))).unwrap();
    run.eval(agent(V::Empty)).unwrap();
    let prompts: Vec<&str> = run.plans.iter().map(|p| p.prompt.as_str()).collect();
    assert_eq!(prompts, ["p", "\u{85}q\u{85}", ""]);
}

#[test]
fn system_joins_runtime_system_props_system_and_fragments() {
    let mut run = Run::with_policy(limits(), with_system("  runtime \n"));
    let entry = AgentEntry {
        system: Some("\t fixed ".into()),
        ..entry("p")
    };
    let tree = agent_with(
        entry,
        arr(vec![
            system(text(" one ")),
            text("x"),
            system(text("two\n\ntwo")),
        ]),
    );
    run.eval(tree).unwrap();
    assert_eq!(run.plans[0].system, "runtime\nfixed\none\ntwo\n\ntwo");
}

#[test]
fn empty_fixed_system_fragments_are_dropped() {
    let cases = [
        (" ", Some(" \u{FEFF} "), vec![], ""),
        ("", None, vec![system(text("only"))], "only"),
        ("rt", Some(""), vec![], "rt"),
        ("", Some("props"), vec![system(text("frag"))], "props\nfrag"),
        ("\u{85}", None, vec![], "\u{85}"),
    ];
    for (runtime, props, fragments, expected) in cases {
        let mut run = Run::with_policy(limits(), with_system(runtime));
        let entry = AgentEntry {
            system: props.map(str::to_string),
            ..entry("p")
        };
        let mut children = fragments;
        children.push(text("x"));
        run.eval(agent_with(entry, arr(children))).unwrap();
        assert_eq!(
            run.plans[0].system, expected,
            "runtime {runtime:?} props {props:?}"
        );
    }
}
