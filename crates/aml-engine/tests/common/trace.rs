//! Compact views of the trace records a [`Run`](super::Run) drained.

use serde_json::Value;

/// One line per record: `start trace-1<trace-0 App`, `end trace-1 ok`, `end trace-1 error`.
pub fn summary(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let id = r["spanId"].as_str().unwrap();
            match r["type"].as_str().unwrap() {
                "span.start" => {
                    let parent = r.get("parentSpanId").and_then(Value::as_str).unwrap_or("-");
                    format!("start {id}<{parent} {}", r["name"].as_str().unwrap())
                }
                "span.end" => format!("end {id} {}", r["status"].as_str().unwrap()),
                other => format!("{other} {id}"),
            }
        })
        .collect()
}
