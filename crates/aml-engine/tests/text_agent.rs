//! The one-call text-only Agent (`Domain::enter_text_agent` / `finish_text_agent`): the same
//! plan, output and trace as the driver's step-by-step sequence, and the step it stops at
//! when the sequence cannot go on.

use aml_engine::{AgentEntry, Domain, EvalError, Limits, NodeKind, Op, Primitive, TextAgentStart};

const AGENT: u8 = Primitive::Agent as u8;

fn entry() -> AgentEntry {
    AgentEntry {
        has_provider: true,
        provider: Some("bench".into()),
        ..AgentEntry::default()
    }
}

fn traced() -> Domain {
    let mut domain = Domain::new(Limits::default());
    domain.set_tracing(true);
    domain.open_root();
    domain
}

/// What the facade reads of a plan: span, parent span, prompt, system, follow-ups.
fn summary(plan: &aml_engine::AgentPlan) -> ([String; 4], Vec<String>) {
    let parts = [
        plan.span_id.to_string(),
        plan.parent_span.to_string(),
        plan.prompt().to_string(),
        plan.system(),
    ];
    (parts, plan.follow_ups().to_vec())
}

/// The trace without timestamps, trace-clock times and durations, which differ between two runs.
fn shape(domain: &mut Domain) -> Vec<serde_json::Value> {
    let mut records = serde_json::to_value(domain.drain_trace()).unwrap();
    for record in records.as_array_mut().unwrap() {
        let record = record.as_object_mut().unwrap();
        record.remove("timestamp");
        record.remove("durationMs");
        record.remove("at");
    }
    records.as_array().unwrap().clone()
}

#[test]
fn one_call_each_way_matches_the_step_by_step_sequence() {
    let mut fused = traced();
    let task = fused.new_task(None).unwrap();
    let plan = match fused
        .enter_text_agent(task, 2, entry(), "  hello ")
        .unwrap()
    {
        TextAgentStart::Ready(plan) => summary(plan),
        TextAgentStart::Stopped(step) => panic!("stopped at {step:?}"),
    };
    assert_eq!(
        fused.finish_text_agent(task, "reply", "reply").unwrap().op,
        Op::Done
    );
    assert_eq!(fused.live_tasks(), 0);

    let mut stepped = traced();
    let task = stepped.new_task(None).unwrap();
    assert_eq!(
        stepped
            .node(task, 2, NodeKind::Primitive(AGENT), "")
            .unwrap()
            .op,
        Op::Primitive
    );
    assert_eq!(stepped.enter_agent(task, entry()).unwrap().op, Op::Children);
    assert_eq!(stepped.text(task, "  hello ").unwrap().op, Op::Agent);
    assert_eq!(summary(stepped.agent_plan(task).unwrap()), plan);
    assert_eq!(
        stepped.agent_done(task, "reply", "reply").unwrap().op,
        Op::Done
    );
    assert_eq!(stepped.finish(task).unwrap(), "reply");

    assert_eq!(plan.0, ["span-1", "trace-0", "hello", ""]);
    let trace = shape(&mut fused);
    assert_eq!(trace.len(), 3, "{trace:?}");
    assert_eq!(trace, shape(&mut stepped));
}

#[test]
fn an_agent_without_a_provider_stops_at_the_error_step() {
    let mut domain = Domain::new(Limits::default());
    let task = domain.new_task(None).unwrap();
    let start = domain
        .enter_text_agent(task, 2, AgentEntry::default(), "p")
        .unwrap();
    let TextAgentStart::Stopped(step) = start else {
        panic!("an Agent without a provider must not be ready")
    };
    assert_eq!(step.op, Op::Error);
    assert_eq!(
        domain.take_error(task).unwrap(),
        EvalError::NoProvider(aml_engine::SpanId::Span(1))
    );
}

#[test]
fn the_call_budget_stops_the_second_agent_before_it_is_ready() {
    let limits = Limits {
        max_agent_calls: 1,
        ..Limits::default()
    };
    let mut domain = Domain::new(limits);
    let first = domain.new_task(None).unwrap();
    assert!(matches!(
        domain.enter_text_agent(first, 2, entry(), "a").unwrap(),
        TextAgentStart::Ready(_)
    ));
    let second = domain.new_task(None).unwrap();
    let TextAgentStart::Stopped(step) = domain.enter_text_agent(second, 4, entry(), "b").unwrap()
    else {
        panic!("the second Agent is over the call budget")
    };
    assert_eq!(step.op, Op::Error);
    assert!(
        domain
            .error_message(second)
            .unwrap()
            .contains("maxAgentCalls"),
        "{}",
        domain.error_message(second).unwrap()
    );
}

#[test]
fn a_result_that_does_not_complete_the_task_is_handed_back() {
    let mut domain = Domain::new(Limits::default());
    let task = domain.new_task(None).unwrap();
    // Not an Agent the text-only path entered: the engine rejects the completion and says so.
    assert_eq!(
        domain
            .node(task, 2, NodeKind::Primitive(AGENT), "")
            .unwrap()
            .op,
        Op::Primitive
    );
    let step = domain.finish_text_agent(task, "x", "").unwrap();
    assert_eq!(step.op, Op::Error);
    assert_eq!(domain.live_tasks(), 1);
}
