//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4): capture frames
//! routing text to the Agent / System / FollowUp channels, placement and content errors,
//! trimming, system joining, turns and call budgets, the scheduler, and the Agent span.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use aml_engine::{AgentEntry, Domain, EvalError, Limits, Op, Policy, Primitive, SpanId};
use common::*;
use serde_json::{json, Value};

fn limits() -> Limits {
    Limits::default()
}

fn engine(e: EvalError) -> Result<String, Failure> {
    Err(Failure::Engine(e))
}

fn with_system(system: &str) -> Policy {
    Policy {
        system: system.into(),
        ..Policy::default()
    }
}

fn span(n: u64) -> SpanId {
    SpanId::Span(n)
}

/// The records of spans of `kind` (start and end), or point events named `name`.
fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

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
// Placement and content errors
// ---------------------------------------------------------------------------------------

#[test]
fn system_placement_errors() {
    let only = EvalError::OnlyInsideAgent("System");
    let nested = EvalError::NestedDescriptor("System");
    let cases = [
        (system(text("x")), only.clone()),
        (comp("C", |_| system(text("x"))), only.clone()),
        (
            agent(arr(vec![text("p"), follow_up(system(text("x")))])),
            only.clone(),
        ),
        (
            agent(system(arr(vec![text("a"), system(text("b"))]))),
            nested.clone(),
        ),
        (
            agent(system(comp("C", |_| system(text("b"))))),
            nested.clone(),
        ),
    ];
    for (tree, error) in cases {
        let mut run = Run::new(limits());
        assert_eq!(run.eval(tree), engine(error));
        assert!(run.plans.is_empty());
        assert_eq!(run.d.live_tasks(), 0);
    }
    assert_eq!(only.to_string(), "<System> is only valid inside <Agent>");
    assert_eq!(
        nested.to_string(),
        "nested <System> descriptors are invalid"
    );
}

#[test]
fn follow_up_placement_errors() {
    let only = EvalError::OnlyInsideAgent("FollowUp");
    let nested = EvalError::NestedDescriptor("FollowUp");
    let cases = [
        (follow_up(text("x")), only.clone()),
        (agent(system(follow_up(text("x")))), only.clone()),
        (
            agent(arr(vec![text("p"), follow_up(follow_up(text("x")))])),
            nested.clone(),
        ),
        (
            agent(follow_up(comp("C", |_| follow_up(text("x"))))),
            nested.clone(),
        ),
        (
            agent(wrapper(Primitive::Sandbox, follow_up(text("x")))),
            EvalError::FollowUpNotImmediate,
        ),
        (
            agent(comp("C", |_| {
                wrapper(Primitive::Workspace, comp("D", |_| follow_up(text("x"))))
            })),
            EvalError::FollowUpNotImmediate,
        ),
    ];
    for (tree, error) in cases {
        let mut run = Run::new(limits());
        assert_eq!(run.eval(tree), engine(error));
        assert!(run.plans.is_empty());
    }
    assert_eq!(only.to_string(), "<FollowUp> is only valid inside <Agent>");
    assert_eq!(
        nested.to_string(),
        "nested <FollowUp> descriptors are invalid"
    );
    assert_eq!(
        EvalError::FollowUpNotImmediate.to_string(),
        "<FollowUp> must be an immediate message descriptor of <Agent>"
    );
}

#[test]
fn lexical_wrappers_only_matter_for_follow_ups_and_context_is_transparent() {
    // A FollowUp under the transparent Context provider is still immediate.
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        text("p"),
        wrapper(Primitive::Context, follow_up(text("f"))),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    assert_eq!(run.plans[0].follow_ups, ["f"]);
    // System, text and Tools still reach the Agent through a Sandbox wrapper.
    let mut run = Run::new(limits());
    let tree = agent(wrapper(
        Primitive::Sandbox,
        arr(vec![system(text("s")), text("p"), tool("t", 1)]),
    ));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    assert_eq!(run.plans[0].system, "s");
    assert_eq!(run.plans[0].tools, [("t".to_string(), 1)]);
    // A wrapper outside the Agent does not count: the wrapper must be between them.
    let mut run = Run::new(limits());
    let tree = wrapper(
        Primitive::Sandbox,
        agent(arr(vec![text("p"), follow_up(text("f"))])),
    );
    assert_eq!(run.eval(tree).unwrap(), "[p]");
}

#[test]
fn tool_placement_errors() {
    let cases = [
        (tool("t", 0), EvalError::OnlyInsideAgent("Tool")),
        (
            agent(system(tool("t", 0))),
            EvalError::OnlyInsideAgent("Tool"),
        ),
        (
            agent(arr(vec![text("p"), follow_up(tool("t", 0))])),
            EvalError::InvalidInsideFollowUp("Tool"),
        ),
        (
            agent(arr(vec![tool("t", 0), tool("t", 1)])),
            EvalError::DuplicateTool("t".into()),
        ),
    ];
    for (tree, error) in cases {
        let mut run = Run::new(limits());
        assert_eq!(run.eval(tree), engine(error));
    }
    assert_eq!(
        EvalError::InvalidInsideFollowUp("Tool").to_string(),
        "<Tool> is invalid inside <FollowUp>"
    );
    let policy = Policy {
        allowed_tools: Some(vec!["ok".into()]),
        ..Policy::default()
    };
    let mut run = Run::with_policy(limits(), policy);
    assert_eq!(
        run.eval(agent(arr(vec![tool("ok", 0), tool("nope", 1)]))),
        engine(EvalError::ToolNotAllowed("nope".into()))
    );
}

#[test]
fn system_and_follow_up_must_resolve_to_non_empty_text() {
    let empties = || {
        vec![
            V::Empty,
            text(""),
            text(" \n\t"),
            text("\u{FEFF}\u{3000}\u{2028}"),
            arr(vec![V::Empty, text("  ")]),
            arr(vec![]),
        ]
    };
    for content in empties() {
        let mut run = Run::new(limits());
        assert_eq!(
            run.eval(agent(arr(vec![text("p"), system(content)]))),
            engine(EvalError::EmptyContent("System"))
        );
    }
    for content in empties() {
        let mut run = Run::new(limits());
        assert_eq!(
            run.eval(agent(arr(vec![text("p"), follow_up(content)]))),
            engine(EvalError::EmptyContent("FollowUp"))
        );
    }
    // U+0085 is not JavaScript whitespace: it is content.
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        system(text("\u{85}")),
        text("p"),
        follow_up(text("\u{85}")),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    assert_eq!(run.plans[0].system, "\u{85}");
    assert_eq!(run.plans[0].follow_ups, ["\u{85}"]);
    assert_eq!(
        EvalError::EmptyContent("System").to_string(),
        "<System> must resolve to non-empty text"
    );
    assert_eq!(
        EvalError::EmptyContent("FollowUp").to_string(),
        "<FollowUp> must resolve to non-empty text"
    );
}

#[test]
fn non_whitespace_agent_text_cannot_follow_a_follow_up() {
    let after = EvalError::TextAfterFollowUp;
    assert_eq!(
        after.to_string(),
        "non-whitespace Agent text cannot follow <FollowUp>"
    );
    let late = [
        text("late"),
        V::Num(0.0),
        comp("C", |_| text(" x ")),
        agent(text("child result")),
    ];
    for value in late {
        let mut run = Run::new(limits());
        let tree = agent(arr(vec![text("p"), follow_up(text("f")), value]));
        assert_eq!(run.eval(tree), engine(after.clone()));
    }
    // Whitespace (JS whitespace) and empty values are ignored; a System may still follow.
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![
        text("p"),
        follow_up(text("f")),
        text(" \n\t\u{FEFF}\u{3000}"),
        V::Empty,
        system(text("s")),
        follow_up(text("g")),
        text("  "),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    assert_eq!(run.plans[0].follow_ups, ["f", "g"]);
    // ...but U+0085 is not JS whitespace.
    let mut run = Run::new(limits());
    let tree = agent(arr(vec![text("p"), follow_up(text("f")), text("\u{85}")]));
    assert_eq!(run.eval(tree), engine(after));
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

// ---------------------------------------------------------------------------------------
// Completion-time checks: provider, turns, calls
// ---------------------------------------------------------------------------------------

#[test]
fn no_provider_is_raised_after_the_children_resolved() {
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let child = comp("Child", move |_| {
        r.set(true);
        text("c")
    });
    let mut run = Run::new(limits());
    let tree = agent_with(
        AgentEntry::default(),
        arr(vec![child, agent(text("inner"))]),
    );
    assert_eq!(run.eval(tree), engine(EvalError::NoProvider(span(1))));
    assert!(ran.get());
    // The child Agent ran before the parent failed.
    assert_eq!(run.plans.len(), 1);
    assert_eq!(run.plans[0].span, "span-2");
    assert_eq!(
        EvalError::NoProvider(span(1)).to_string(),
        "Agent span-1 has no provider"
    );
}

#[test]
fn max_turns_per_agent_counts_the_prompt_and_each_follow_up() {
    let turns = |n: usize| {
        let mut items = vec![text("p")];
        items.extend((1..n).map(|i| follow_up(text(&format!("f{i}")))));
        agent(arr(items))
    };
    let two = Limits {
        max_turns_per_agent: 2,
        ..limits()
    };
    let mut run = Run::new(two);
    assert_eq!(run.eval(turns(2)).unwrap(), "[p]");
    let mut run = Run::new(two);
    assert_eq!(run.eval(turns(3)), engine(EvalError::MaxTurns(span(1), 2)));
    assert!(run.plans.is_empty());
    assert_eq!(
        EvalError::MaxTurns(span(1), 2).to_string(),
        "Agent span-1 exceeded maxTurnsPerAgent 2"
    );
    let mut run = Run::new(Limits {
        max_turns_per_agent: 0,
        ..limits()
    });
    assert_eq!(run.eval(turns(50)).unwrap(), "[p]");
    assert_eq!(run.plans[0].follow_ups.len(), 49);
    let mut run = Run::new(limits());
    assert_eq!(run.eval(turns(16)).unwrap(), "[p]");
    let mut run = Run::new(limits());
    assert_eq!(
        run.eval(turns(17)),
        engine(EvalError::MaxTurns(span(1), 16))
    );
}

#[test]
fn sandboxed_agents_stop_for_the_handshake_after_the_provider_check_and_before_budgets() {
    let sandboxed = |children: V, provider: bool| {
        let entry = AgentEntry {
            has_provider: provider,
            sandboxed: true,
            ..AgentEntry::default()
        };
        agent_with(entry, children)
    };
    let one_turn = Limits {
        max_turns_per_agent: 1,
        ..limits()
    };
    // The provider check comes first: no handshake for an Agent that has no provider.
    let mut run = Run::new(one_turn);
    let tree = sandboxed(arr(vec![text("p"), follow_up(text("f"))]), false);
    assert_eq!(run.eval(tree), engine(EvalError::NoProvider(span(1))));
    assert_eq!(run.handshakes, 0);
    // The handshake precedes the turn budget.
    let mut run = Run::new(one_turn);
    let tree = sandboxed(arr(vec![text("p"), follow_up(text("f"))]), true);
    assert_eq!(run.eval(tree), engine(EvalError::MaxTurns(span(1), 1)));
    assert_eq!(run.handshakes, 1);
    assert!(run.plans.is_empty());
    // An accepted handshake runs the provider; unsandboxed Agents never stop for one.
    let mut run = Run::new(limits());
    assert_eq!(run.eval(sandboxed(text("p"), true)).unwrap(), "[p]");
    assert_eq!(run.eval(agent(text("q"))).unwrap(), "[q]");
    assert_eq!(run.handshakes, 1);
}

#[test]
fn agent_handshake_done_out_of_order_is_an_invariant_error() {
    let mut d = Domain::new(limits());
    let task = d.new_task(None).unwrap();
    let step = d.agent_handshake_done(task).unwrap();
    assert_eq!(step.op, Op::Error);
    assert_eq!(
        d.error_message(task).unwrap(),
        "AML Agent handshake completed out of lifecycle order"
    );
}

#[test]
fn max_agent_calls_counts_each_agent_once_in_completion_order() {
    let one = Limits {
        max_agent_calls: 1,
        ..limits()
    };
    // One multi-turn Agent counts once.
    let mut run = Run::new(one);
    let tree = agent(arr(vec![
        text("p"),
        follow_up(text("a")),
        follow_up(text("b")),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[p]");
    // Siblings: the second over budget names its span.
    let mut run = Run::new(one);
    let tree = arr(vec![agent(text("a")), agent(text("b"))]);
    assert_eq!(run.eval(tree), engine(EvalError::MaxAgentCalls(1, span(2))));
    assert_eq!(run.plans.len(), 1);
    assert_eq!(
        EvalError::MaxAgentCalls(1, span(2)).to_string(),
        "AML evaluation exceeded maxAgentCalls 1 at Agent span-2"
    );
    // Nested: the child reserves first, so the parent is over budget.
    let mut run = Run::new(one);
    assert_eq!(
        run.eval(agent(agent(text("child")))),
        engine(EvalError::MaxAgentCalls(1, span(1)))
    );
    assert_eq!(run.plans[0].span, "span-2");
    // 0 is unlimited.
    let mut run = Run::new(Limits {
        max_agent_calls: 0,
        ..limits()
    });
    let many: Vec<V> = (0..100).map(|i| agent(text(&i.to_string()))).collect();
    assert_eq!(run.eval(arr(many)).unwrap().len(), 390);
    assert_eq!(run.plans.len(), 100);
}

#[test]
fn max_agent_calls_is_shared_by_the_nested_tasks_of_a_domain() {
    let two = Limits {
        max_agent_calls: 2,
        ..limits()
    };
    let mut run = Run::new(two);
    let caller = comp("Caller", |ctx| {
        let a = ctx.evaluate(agent(text("a"))).map_err(|e| e.message());
        let b = ctx.evaluate(agent(text("b"))).map_err(|e| e.message());
        let c = ctx.evaluate(agent(text("c"))).map_err(|e| e.message());
        text(&format!("{a:?}{b:?}{c:?}"))
    });
    assert_eq!(
        run.eval(caller).unwrap(),
        r#"Ok("[a]")Ok("[b]")Err("AML evaluation exceeded maxAgentCalls 2 at Agent span-3")"#
    );
    // A new domain has a fresh budget.
    let mut again = Run::new(two);
    assert_eq!(
        again
            .eval(arr(vec![agent(text("x")), agent(text("y"))]))
            .unwrap(),
        "[x][y]"
    );
}

#[test]
fn completion_checks_run_in_the_documented_order() {
    // No provider beats too many turns; too many turns beats the call budget.
    let tight = Limits {
        max_agent_calls: 1,
        max_turns_per_agent: 1,
        ..limits()
    };
    let mut run = Run::new(tight);
    let tree = agent_with(
        AgentEntry::default(),
        arr(vec![text("p"), follow_up(text("f"))]),
    );
    assert_eq!(run.eval(tree), engine(EvalError::NoProvider(span(1))));
    let mut run = Run::new(tight);
    let tree = arr(vec![
        agent(text("spend the budget")),
        agent(arr(vec![text("p"), follow_up(text("f"))])),
    ]);
    assert_eq!(run.eval(tree), engine(EvalError::MaxTurns(span(2), 1)));
    // A rejected Agent did not reserve a call.
    let mut run = Run::new(tight);
    let caller = comp("Caller", |ctx| {
        let first = ctx.evaluate(agent_with(AgentEntry::default(), text("x")));
        assert!(first.is_err());
        text(&ctx.evaluate(agent(text("ok"))).unwrap())
    });
    assert_eq!(run.eval(caller).unwrap(), "[ok]");
}

#[test]
fn a_failing_provider_fails_the_task_and_releases_the_slot() {
    let mut run = Run::new(Limits {
        max_concurrent_agents: 1,
        ..limits()
    })
    .with_provider(|plan| {
        if plan.prompt == "bad" {
            Err("provider exploded".into())
        } else {
            Ok("ok".into())
        }
    });
    assert_eq!(
        run.eval(agent(text("bad"))),
        Err(Failure::Thrown("provider exploded".into()))
    );
    assert_eq!(run.d.scheduler().active(), 0);
    assert_eq!(run.eval(agent(text("good"))).unwrap(), "ok");
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn agent_protocol_misuse_is_an_invariant_error() {
    let mut d = Domain::new(limits());
    let t = d.new_task(None).unwrap();
    assert!(matches!(d.agent_plan(t), Err(EvalError::Invariant(_))));
    let step = d.agent_done(t, "x", "x").unwrap();
    assert_eq!(step.op, Op::Error);
    assert_eq!(
        d.take_error(t).unwrap(),
        EvalError::Invariant("AML Agent completed out of lifecycle order")
    );
}

// ---------------------------------------------------------------------------------------
// The scheduler
// ---------------------------------------------------------------------------------------

#[test]
fn slots_are_held_only_for_the_provider_call_so_nesting_never_waits() {
    // `drive` asserts every request is granted at once; with one slot a deep tree of
    // nested Agents and nested tasks still completes.
    let mut run = Run::new(Limits {
        max_concurrent_agents: 1,
        ..limits()
    });
    let caller = comp("Caller", |ctx| {
        let a = ctx.evaluate(agent(agent(text("a")))).unwrap();
        text(&a)
    });
    let tree = agent(arr(vec![
        agent(arr(vec![agent(text("x")), system(agent(text("s")))])),
        caller,
        follow_up(agent(text("f"))),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[[[x]][[a]]]");
    assert_eq!(run.max_active, 1);
    assert_eq!(run.plans.len(), 7);
    assert_eq!(run.d.scheduler().active(), 0);
}

/// Drives `root` as a fresh root task until its Agent is ready.
fn paused(run: &mut Run, root: V) -> Driver {
    let task = run.d.new_task(None).unwrap();
    let mut drv = run.start(task, root);
    assert_eq!(run.resume(&mut drv).unwrap(), Paused::Agent);
    drv
}

#[test]
fn ready_agents_queue_fifo_behind_the_bound() {
    let mut run = Run::new(Limits {
        max_concurrent_agents: 2,
        ..limits()
    });
    let mut drivers: Vec<Driver> = ["a", "b", "c", "d"]
        .iter()
        .map(|p| paused(&mut run, agent(text(p))))
        .collect();
    let tasks: Vec<_> = drivers.iter().map(|d| d.task).collect();
    let spans: Vec<String> = tasks.iter().map(|&t| run.plan(t).span).collect();
    assert_eq!(spans, ["span-1", "span-2", "span-3", "span-4"]);
    // Ready order: a, b run; c, d wait in that order.
    let s = run.d.scheduler();
    assert!(s.request(tasks[0]));
    assert!(s.request(tasks[1]));
    assert!(!s.request(tasks[2]));
    assert!(!s.request(tasks[3]));
    assert_eq!(s.queued(), 2);
    assert_eq!(s.active(), 2);
    // b finishes first: its slot passes to c (FIFO), not to d.
    run.complete_agent(&mut drivers[1], "B");
    assert_eq!(
        run.resume(&mut drivers[1]).unwrap(),
        Paused::Done("B".into())
    );
    assert_eq!(run.d.scheduler().release(), Some(tasks[2]));
    assert_eq!(run.d.scheduler().active(), 2);
    for i in [0, 2] {
        run.complete_agent(&mut drivers[i], "x");
        run.resume(&mut drivers[i]).unwrap();
    }
    assert_eq!(run.d.scheduler().release(), Some(tasks[3]));
    assert_eq!(run.d.scheduler().release(), None);
    run.complete_agent(&mut drivers[3], "D");
    assert_eq!(
        run.resume(&mut drivers[3]).unwrap(),
        Paused::Done("D".into())
    );
    assert_eq!(run.d.scheduler().release(), None);
    assert_eq!(run.d.scheduler().active(), 0);
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn the_bound_comes_from_max_concurrent_agents_and_zero_is_unlimited() {
    for (max, granted) in [(1u64, 1usize), (3, 3), (4, 4), (0, 10)] {
        let mut run = Run::new(Limits {
            max_concurrent_agents: max,
            ..limits()
        });
        let drivers: Vec<Driver> = (0..10)
            .map(|i| paused(&mut run, agent(text(&i.to_string()))))
            .collect();
        let results: Vec<bool> = drivers
            .iter()
            .map(|d| run.d.scheduler().request(d.task))
            .collect();
        assert_eq!(results.iter().filter(|r| **r).count(), granted, "max {max}");
        assert!(results[..granted].iter().all(|r| *r));
    }
    // The default is 4.
    assert_eq!(Limits::default().max_concurrent_agents, 4);
}

#[test]
fn abort_drains_the_queue_in_order_and_leaves_it_empty() {
    let mut run = Run::new(Limits {
        max_concurrent_agents: 1,
        ..limits()
    });
    let drivers: Vec<Driver> = (0..4)
        .map(|i| paused(&mut run, agent(text(&i.to_string()))))
        .collect();
    for d in &drivers {
        run.d.scheduler().request(d.task);
    }
    let queued: Vec<_> = drivers[1..].iter().map(|d| d.task).collect();
    assert_eq!(run.d.scheduler().drain(), queued);
    assert_eq!(run.d.scheduler().queued(), 0);
    // The queued tasks fail (cancelled before provider execution); the running one
    // finishes, and its release hands the slot to nobody.
    for d in &drivers[1..] {
        run.fail(d.task, "cancelled before provider execution");
    }
    assert_eq!(run.d.scheduler().release(), None);
    assert_eq!(run.d.scheduler().active(), 0);
    // A withdrawn task is not handed a slot either.
    let mut s = aml_engine::Scheduler::new(1);
    assert!(s.request(1));
    assert!(!s.request(2));
    assert!(!s.request(3));
    assert!(s.withdraw(2));
    assert!(!s.withdraw(2));
    assert_eq!(s.release(), Some(3));
}

#[test]
fn each_domain_has_its_own_scheduler() {
    let one = Limits {
        max_concurrent_agents: 1,
        ..limits()
    };
    let mut first = Run::new(one);
    let mut second = Run::new(one);
    let a = paused(&mut first, agent(text("a")));
    let b = paused(&mut second, agent(text("b")));
    assert!(first.d.scheduler().request(a.task));
    assert!(second.d.scheduler().request(b.task));
    // Within one domain the second request waits.
    let c = paused(&mut first, agent(text("c")));
    assert!(!first.d.scheduler().request(c.task));
}

// ---------------------------------------------------------------------------------------
// Spans and point events
// ---------------------------------------------------------------------------------------

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
