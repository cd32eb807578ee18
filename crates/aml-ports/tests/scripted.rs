//! The Tool port and the scripted provider against a fake invoker: ordering, failures as
//! data, concurrency, and cancellation that never hangs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aml_ports::{run_script, Script, ToolCallError, ToolErrorKind, ToolInvoker, ToolRef, ToolSpec};
use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const ECHO: ToolRef = ToolRef(1);
const REJECT: ToolRef = ToolRef(2);
const HANG: ToolRef = ToolRef(3);
const GATE: ToolRef = ToolRef(4);

/// Echo returns its input, Reject fails like a ToolInputError, Hang settles only when
/// cancelled, Gate waits until `gate_size` calls are in flight at once.
#[derive(Default)]
struct Fake {
    calls: Mutex<Vec<(ToolRef, Value)>>,
    in_flight: AtomicUsize,
    gate_size: usize,
    gate: Notify,
}

#[async_trait]
impl ToolInvoker for Fake {
    async fn call(
        &self,
        tool: ToolRef,
        input: Value,
        cancel: CancellationToken,
    ) -> Result<Value, ToolCallError> {
        if cancel.is_cancelled() {
            return Err(ToolCallError::cancelled());
        }
        self.calls.lock().unwrap().push((tool, input.clone()));
        match tool {
            ECHO => Ok(input),
            REJECT => Err(ToolCallError::from_js(
                "ToolInputError".into(),
                "Tool \"reject\" input failed schema validation".into(),
                false,
            )),
            HANG => {
                cancel.cancelled().await;
                Err(ToolCallError::from_js("Error".into(), "stop".into(), true))
            }
            GATE => {
                let notified = self.gate.notified();
                if self.in_flight.fetch_add(1, Ordering::SeqCst) + 1 == self.gate_size {
                    self.gate.notify_waiters();
                } else {
                    notified.await;
                }
                Ok(input)
            }
            _ => Err(ToolCallError::unavailable("unknown ref")),
        }
    }
}

fn spec(tool: ToolRef, name: &str) -> ToolSpec {
    ToolSpec {
        tool,
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({ "type": "object" }),
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        spec(ECHO, "echo"),
        spec(REJECT, "reject"),
        spec(HANG, "hang"),
        spec(GATE, "gate"),
    ]
}

fn script(value: Value) -> Script {
    serde_json::from_value(value).expect("valid script")
}

#[tokio::test]
async fn sequential_steps_run_in_order_and_report_failures_as_data() {
    let fake = Fake::default();
    let plan = script(json!({ "steps": [
        { "tool": "echo", "input": { "a": 1 } },
        { "tool": "reject", "input": { "a": "x" } },
        { "tool": "missing", "input": {} },
        { "tool": "echo", "input": "text" },
    ]}));
    let report = run_script(&fake, &tools(), &plan, &CancellationToken::new()).await;
    assert!(!report.cancelled);
    assert_eq!(report.outcomes.len(), 4);
    assert_eq!(report.outcomes[0], Ok(json!({ "a": 1 })));
    let rejected = report.outcomes[1].clone().unwrap_err();
    assert_eq!(rejected.kind, ToolErrorKind::Input);
    assert_eq!(rejected.name, "ToolInputError");
    let missing = report.outcomes[2].clone().unwrap_err();
    assert_eq!(missing.kind, ToolErrorKind::Unavailable);
    assert_eq!(
        missing.message,
        "Tool \"missing\" is not granted to this Agent"
    );
    // The ungranted step never reached the invoker.
    let calls = fake.calls.lock().unwrap().clone();
    let refs: Vec<ToolRef> = calls.iter().map(|(tool, _)| *tool).collect();
    assert_eq!(refs, vec![ECHO, REJECT, ECHO]);
    // Key order depends on serde_json's features in the build, so compare parsed lines.
    let lines: Vec<Value> = report
        .text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({ "ok": true, "value": { "a": 1 } }),
            json!({ "ok": false, "kind": "input", "name": "ToolInputError",
                    "message": "Tool \"reject\" input failed schema validation" }),
            json!({ "ok": false, "kind": "unavailable", "name": "Error",
                    "message": "Tool \"missing\" is not granted to this Agent" }),
            json!({ "ok": true, "value": "text" }),
        ]
    );
}

#[tokio::test]
async fn concurrent_steps_are_all_in_flight_at_once() {
    let fake = Fake {
        gate_size: 200,
        ..Fake::default()
    };
    let steps: Vec<Value> = (0..200)
        .map(|i| json!({ "tool": "gate", "input": i }))
        .collect();
    let plan = script(json!({ "steps": steps, "concurrent": true }));
    // The gate opens only when all 200 calls wait together; a serial runner would hang.
    let report = tokio::time::timeout(
        Duration::from_secs(5),
        run_script(&fake, &tools(), &plan, &CancellationToken::new()),
    )
    .await
    .expect("all calls were in flight together");
    let values: Vec<Value> = report.outcomes.into_iter().map(Result::unwrap).collect();
    assert_eq!(values, (0..200).map(|i| json!(i)).collect::<Vec<_>>());
}

#[tokio::test]
async fn cancelling_settles_the_pending_call_and_stops_the_script() {
    let fake = Arc::new(Fake::default());
    let plan = script(json!({ "steps": [
        { "tool": "echo", "input": 1 },
        { "tool": "hang", "input": 2 },
        { "tool": "echo", "input": 3 },
    ]}));
    let cancel = CancellationToken::new();
    let running = {
        let (fake, cancel) = (fake.clone(), cancel.clone());
        tokio::spawn(async move { run_script(&*fake, &tools(), &plan, &cancel).await })
    };
    while fake.calls.lock().unwrap().len() < 2 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    cancel.cancel();
    let report = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("cancellation does not hang")
        .unwrap();
    assert!(report.cancelled);
    assert_eq!(
        report.outcomes.len(),
        2,
        "the step after the abort never ran"
    );
    let aborted = report.outcomes[1].clone().unwrap_err();
    assert_eq!(aborted.kind, ToolErrorKind::Cancelled);
    assert_eq!(
        (aborted.name.as_str(), aborted.message.as_str()),
        ("Error", "stop")
    );
}

#[tokio::test]
async fn a_pre_cancelled_run_calls_nothing() {
    let fake = Fake::default();
    let plan = script(json!({ "steps": [{ "tool": "echo", "input": 1 }], "concurrent": true }));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let report = run_script(&fake, &tools(), &plan, &cancel).await;
    assert!(report.cancelled);
    assert_eq!(report.outcomes, vec![Err(ToolCallError::cancelled())]);
    assert!(fake.calls.lock().unwrap().is_empty());
}

#[test]
fn js_failures_are_classified_by_name_and_abort() {
    let classify =
        |name: &str, aborted| ToolCallError::from_js(name.into(), "m".into(), aborted).kind;
    assert_eq!(classify("ToolInputError", false), ToolErrorKind::Input);
    assert_eq!(classify("ToolOutputError", false), ToolErrorKind::Output);
    assert_eq!(classify("TypeError", false), ToolErrorKind::Failed);
    // An abort reason is a cancellation whatever its class.
    assert_eq!(classify("ToolInputError", true), ToolErrorKind::Cancelled);
}

#[test]
fn scripts_reject_unknown_fields_and_missing_inputs() {
    let bad = |value: Value| serde_json::from_value::<Script>(value).is_err();
    assert!(bad(json!({ "steps": [{ "tool": "echo" }] })));
    assert!(bad(json!({ "steps": [], "parallel": true })));
    assert!(!bad(json!({ "steps": [] })));
}
