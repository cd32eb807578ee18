//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4), part 3:
//! completion-time checks (provider, sandbox handshake, turns and call budgets, their order),
//! provider failures and protocol misuse.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use aml_engine::{AgentEntry, Domain, EvalError, Limits, Op};
use common::*;

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
