//! Token usage (issue 37): reported usage lands on the Agent span, rolls up the span tree to
//! the root, sums per evaluation, and `maxTokens` stops the evaluation once it is reached.

mod common;

use aml_engine::{EvalError, Limits, Reported, Usage};
use common::*;
use serde_json::{json, Value};

use Reported::{Absent, Number};

/// Drives `root` as a fresh root task until its Agent is ready.
fn paused(run: &mut Run, root: V) -> Driver {
    let task = run.d.new_task(None).unwrap();
    let mut drv = run.start(task, root);
    assert_eq!(run.resume(&mut drv).unwrap(), Paused::Agent);
    drv
}

fn report(run: &mut Run, drv: &Driver, input: f64, output: f64) {
    run.d
        .agent_usage(
            drv.task,
            Some([Number(input), Number(output), Absent, Absent, Absent]),
        )
        .unwrap();
}

/// The `usage` attribute of every `span.end`, by span id.
fn ended_usage(run: &Run) -> Vec<(String, Value)> {
    run.records
        .iter()
        .filter(|r| r["type"] == "span.end")
        .filter_map(|r| {
            let usage = r["attributes"].get("usage")?;
            Some((r["spanId"].as_str().unwrap().to_string(), usage.clone()))
        })
        .collect()
}

#[test]
fn usage_lands_on_the_agent_span_and_rolls_up_to_the_root() {
    let mut run = Run::traced(limits());
    let mut a = paused(&mut run, agent(text("a")));
    let mut b = paused(&mut run, agent(text("b")));
    let mut c = paused(&mut run, agent(text("c")));
    report(&mut run, &a, 3.0, 4.0);
    run.d
        .agent_usage(
            b.task,
            Some([Absent, Absent, Number(10.0), Absent, Number(2.0)]),
        )
        .unwrap();
    for drv in [&mut a, &mut b, &mut c] {
        run.complete_agent(drv, "x");
        assert_eq!(run.resume(drv).unwrap(), Paused::Done("x".into()));
    }
    run.close_root(None);
    let total =
        json!({ "inputTokens": 3, "outputTokens": 4, "totalTokens": 17, "reasoningTokens": 2 });
    assert_eq!(
        ended_usage(&run),
        [
            (
                "span-1".to_string(),
                json!({ "inputTokens": 3, "outputTokens": 4 })
            ),
            (
                "span-2".to_string(),
                json!({ "totalTokens": 10, "reasoningTokens": 2 })
            ),
            ("trace-0".to_string(), total.clone()),
        ]
    );
    assert_eq!(serde_json::to_value(run.d.usage()).unwrap(), total);
}

#[test]
fn without_usage_no_span_carries_it_and_the_total_is_empty() {
    let mut run = Run::traced(limits());
    assert_eq!(run.eval(agent(text("a"))).unwrap(), "[a]");
    run.close_root(None);
    assert!(ended_usage(&run).is_empty());
    assert!(run.d.usage().is_empty());
}

#[test]
fn reaching_max_tokens_fails_the_agent_that_reached_it_and_every_later_agent() {
    let mut run = Run::new(Limits {
        max_tokens: 10,
        ..limits()
    });
    let mut a = paused(&mut run, agent(text("a")));
    let mut b = paused(&mut run, agent(text("b")));
    let below = run
        .d
        .agent_usage(
            a.task,
            Some([Number(3.0), Number(3.0), Absent, Absent, Absent]),
        )
        .unwrap();
    assert_eq!(below, None);
    run.complete_agent(&mut a, "x");
    assert_eq!(run.resume(&mut a).unwrap(), Paused::Done("x".into()));
    let announced = run
        .d
        .agent_usage(
            b.task,
            Some([Number(2.0), Number(2.0), Absent, Absent, Absent]),
        )
        .unwrap();
    assert_eq!(announced, Some(EvalError::MaxTokens(10, span(2), 10)));
    run.complete_agent(&mut b, "y");
    let reached = run.resume(&mut b).unwrap_err();
    assert_eq!(
        reached,
        Failure::Engine(EvalError::MaxTokens(10, span(2), 10))
    );
    assert_eq!(
        reached.message(),
        "AML evaluation reached maxTokens 10 at Agent span-2 (10 tokens used)"
    );
    // A later Agent never gets a ready plan: its provider call does not start.
    let later = run.eval(agent(text("c"))).unwrap_err();
    assert_eq!(
        later.message(),
        "AML evaluation reached maxTokens 10 at Agent span-3 (10 tokens used)"
    );
}

#[test]
fn zero_max_tokens_is_no_budget() {
    let mut run = Run::new(limits());
    assert_eq!(limits().max_tokens, 0);
    let mut a = paused(&mut run, agent(text("a")));
    report(&mut run, &a, 1e12, 1e12);
    run.complete_agent(&mut a, "x");
    assert_eq!(run.resume(&mut a).unwrap(), Paused::Done("x".into()));
    assert_eq!(run.d.usage().counted(), 2_000_000_000_000);
}

#[test]
fn a_bad_usage_fails_the_agent_and_is_not_summed() {
    let mut run = Run::new(limits());
    let mut a = paused(&mut run, agent(text("a")));
    report(&mut run, &a, 1.0, -1.0);
    run.complete_agent(&mut a, "x");
    assert_eq!(
        run.resume(&mut a).unwrap_err().message(),
        "Agent span-1 usage.outputTokens must be a non-negative safe integer"
    );
    let mut b = paused(&mut run, agent(text("b")));
    run.d.agent_usage(b.task, None).unwrap();
    run.complete_agent(&mut b, "x");
    assert_eq!(
        run.resume(&mut b).unwrap_err().message(),
        "Agent span-2 usage must be an object"
    );
    assert_eq!(run.d.usage(), Usage::default());
}
