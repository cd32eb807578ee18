//! Structured tasks (INVENTORY SO-1): the mark the facade sets with `set_structured` and
//! reads back with `is_structured` before trusting a controller filed under a task id.

use aml_engine::{Domain, EvalError, Limits, Op};

#[test]
fn a_structured_task_is_marked_until_it_is_released() {
    let mut d = Domain::new(Limits::default());
    d.open_root();
    let task = d.new_task(None).unwrap();
    assert!(!d.is_structured(task));
    d.set_structured(task).unwrap();
    assert!(d.is_structured(task));
    // Text outside the Agent ends the task with the documented error and releases it.
    let step = d.text(task, " ").unwrap();
    assert!(step.is(Op::Error));
    assert_eq!(
        d.take_error(task).unwrap().to_string(),
        EvalError::StructuredTextOutside.to_string()
    );
    assert!(!d.is_structured(task));
    // The id is reused by the next task, which starts unstructured.
    let next = d.new_task(None).unwrap();
    assert_eq!(next, task);
    assert!(!d.is_structured(next));
}

#[test]
fn unknown_task_ids_are_not_structured() {
    let d = Domain::new(Limits::default());
    assert!(!d.is_structured(0));
    assert!(!d.is_structured(u32::MAX));
}

#[test]
fn a_structured_task_without_an_agent_fails() {
    let mut d = Domain::new(Limits::default());
    d.open_root();
    let task = d.new_task(None).unwrap();
    d.set_structured(task).unwrap();
    assert!(d.empty(task).unwrap().is(Op::Error));
    assert_eq!(
        d.take_error(task).unwrap().to_string(),
        "Structured evaluate() must resolve to exactly one <Agent>"
    );
}
