//! `<Skill>` in the engine (INVENTORY SK-1 and its docs-next placement rule, §2.3): where a
//! Skill may stand, where its text lands, package registration with the nearest Agent plan,
//! duplicates, and the `skill` span. The shared test driver models no scope primitives, so
//! this file drives the domain with its own small mirror-stack driver.

mod skill_support;

use aml_engine::{Domain, EvalError, Limits, Op, SkillGrant};
use serde_json::Value;
use skill_support::*;

#[test]
fn error_messages_are_the_documented_text() {
    assert_eq!(
        EvalError::OnlyInsideAgent("Skill").to_string(),
        "<Skill> is only valid inside <Agent>"
    );
    let duplicate = EvalError::DuplicateSkill("review".into());
    assert_eq!(
        duplicate.to_string(),
        "Agent declares duplicate Skill package \"review\""
    );
    assert_eq!(duplicate.js_name(), "EvaluationError");
}

#[test]
fn a_skill_outside_an_agent_plan_is_rejected() {
    let only = Err(EvalError::OnlyInsideAgent("Skill"));
    let cases = [
        skill(T("x"), "x"),
        Arr(vec![T("a"), skill(T("x"), "x")]),
        Wrap(Box::new(skill(T("x"), "x"))),
        // Another Skill's children are its private input, not an Agent channel.
        agent(skill(skill(T("x"), "x"), "y")),
    ];
    for tree in cases {
        assert_eq!(Run::new().eval(tree), only);
    }
    // Capabilities inside a Skill's children are not in an Agent plan either.
    let tool = agent(skill(Tool("t"), "x"));
    assert_eq!(
        Run::new().eval(tool),
        Err(EvalError::OnlyInsideAgent("Tool"))
    );
}

#[test]
fn text_lands_at_the_authored_position_of_the_agent_channel() {
    let mut run = Run::new();
    let tree = agent(Arr(vec![
        T("before "),
        skill(Arr(vec![T("in"), T("line")]), "SKILL"),
        T(" after"),
        System(Box::new(skill(T("s"), "SYS"))),
        Wrap(Box::new(skill(T("w"), " WRAPPED"))),
        FollowUp(Box::new(skill(T("f"), "FOLLOW"))),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[before SKILL after WRAPPED]");
    assert_eq!(run.inputs, ["inline", "s", "w", "f"]);
    let (prompt, system, follow_ups, skills) = &run.plans[0];
    assert_eq!(prompt, "before SKILL after WRAPPED");
    assert_eq!(system, "SYS");
    assert_eq!(follow_ups, &["FOLLOW"]);
    assert!(skills.is_empty());
}

#[test]
fn children_resolve_first_and_may_contain_agents_with_their_own_skills() {
    let mut run = Run::new();
    let inner = agent(Arr(vec![package("inner", 1), T("child")]));
    let tree = agent(Arr(vec![package("outer", 0), skill(inner, "S"), T("p")]));
    assert_eq!(run.eval(tree).unwrap(), "[outerSp]");
    // The child Agent ran first, inside the Skill's children, with only its own package.
    assert_eq!(run.inputs, ["", "", "[innerchild]"]);
    assert_eq!(run.plans[0].3, [1]);
    assert_eq!(run.plans[1].3, [0]);
}

#[test]
fn packages_register_with_the_nearest_plan_in_completion_order() {
    let mut run = Run::new();
    let tree = agent(Arr(vec![
        package("b", 7),
        System(Box::new(package("a", 3))),
        Wrap(Box::new(package("c", 5))),
        T("go"),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[bcgo]");
    assert_eq!(run.plans[0].3, [7, 3, 5]);
    assert_eq!(run.plans[0].1, "a");
}

#[test]
fn one_agent_cannot_stage_two_packages_of_one_name() {
    let tree = agent(Arr(vec![package("review", 0), package("review", 1)]));
    let duplicate = Err(EvalError::DuplicateSkill("review".into()));
    assert_eq!(Run::new().eval(tree), duplicate);
    // Sibling Agents are separate plans.
    let siblings = Arr(vec![
        agent(package("review", 0)),
        agent(package("review", 1)),
    ]);
    assert_eq!(Run::new().eval(siblings).unwrap(), "[review][review]");
}

#[test]
fn the_skill_span_is_a_trace_span_under_its_enclosing_span() {
    let mut run = Run::traced();
    run.eval(agent(skill(T("x"), "X"))).unwrap();
    let skill_records: Vec<&Value> = run
        .records
        .iter()
        .filter(|r| r["kind"] == "skill")
        .collect();
    assert_eq!(skill_records.len(), 2);
    let (start, end) = (skill_records[0], skill_records[1]);
    assert_eq!(start["type"], "span.start");
    assert_eq!(start["name"], "S");
    assert_eq!(start["spanId"], "trace-1");
    assert_eq!(start["parentSpanId"], "span-1");
    assert_eq!(start["attributes"]["hasSource"], false);
    assert_eq!(start["sensitive"]["source"], "./s");
    assert_eq!(end["type"], "span.end");
    assert_eq!(end["status"], "ok");
    assert_eq!(end["sensitive"]["content"], "X");
}

#[test]
fn skill_done_without_a_skill_scope_is_an_invariant_error() {
    let mut d = Domain::new(Limits::default());
    let task = d.new_task(None).unwrap();
    let grant = SkillGrant {
        name: "x".into(),
        reference: 0,
    };
    let step = d.skill_done(task, "", Some(grant), vec![], vec![]).unwrap();
    assert_eq!(step.op, Op::Error);
    assert_eq!(
        d.error_message(task).unwrap(),
        "AML scope completed out of lifecycle order"
    );
}
