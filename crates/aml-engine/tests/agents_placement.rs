//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4), part 2: placement
//! and content errors of `<System>`, `<FollowUp>` and `<Tool>`.

mod common;

use aml_engine::{EvalError, Policy, Primitive};
use common::*;

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
