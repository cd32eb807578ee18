//! The evaluation half of the binding: creating and disposing domains, feeding classified
//! values to a task, trace draining. Steps are returned as packed integers (see
//! `aml_engine::Step::encode`) so the hot path crosses the boundary with numbers and short
//! strings only.

use aml_engine::{Domain, Limits, Policy, SpanFailure, PRIMITIVES};
use napi::bindgen_prelude::Float64Array;
use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::hot_path::raw_call::JsText;

/// Creates a domain. `limits` are maxAgentCalls, maxConcurrentAgents, maxDepth,
/// maxTurnsPerAgent, maxStateTransitions, maxTokens (validated by the facade); `allowed_tools` and
/// `allowed_mcp_servers` are the runtime allowlists (`null`/omitted: unrestricted; the MCP
/// list comes last so older callers keep working); `system` the runtime `system` option.
#[napi]
pub fn domain_create(
    limits: Vec<f64>,
    allowed_tools: Option<Vec<String>>,
    system: String,
    allowed_mcp_servers: Option<Vec<String>>,
) -> Result<u32> {
    guard(|| {
        let def = Limits::default();
        let at = |i: usize, d: u64| limits.get(i).map(|v| *v as u64).unwrap_or(d);
        let limits = Limits {
            max_agent_calls: at(0, def.max_agent_calls),
            max_concurrent_agents: at(1, def.max_concurrent_agents),
            max_depth: at(2, def.max_depth),
            max_turns_per_agent: at(3, def.max_turns_per_agent),
            max_state_transitions: at(4, def.max_state_transitions),
            max_tokens: at(5, def.max_tokens),
        };
        Ok(registry::insert(Domain::with_policy(
            limits,
            Policy {
                allowed_tools,
                allowed_mcp_servers,
                system,
            },
        )))
    })
}

/// Frees a domain. Later calls with its handle fail with "AML evaluation domain is closed".
#[napi]
pub fn domain_dispose(domain: u32) -> Result<()> {
    guard(|| {
        registry::remove(domain);
        Ok(())
    })
}

/// Number of live domains on this thread (leak checks in tests).
#[napi]
pub fn live_domains() -> Result<u32> {
    guard(|| Ok(registry::live() as u32))
}

/// Turns trace records on or off; `content`: some listener consents to content, so the
/// records keep their sensitive attributes (without, they are not even built).
#[napi]
pub fn set_tracing(domain: u32, enabled: bool, content: bool) -> Result<()> {
    guard(|| {
        registry::with(domain, |d| {
            d.set_tracing(enabled);
            d.set_trace_content(content);
            Ok(())
        })
    })
}

/// Pending trace records as a JSON array (`[]` when there are none).
#[napi(ts_return_type = "string")]
pub fn drain_trace(domain: u32) -> Result<JsText> {
    guard(|| {
        registry::with(domain, |d| {
            let records = d.drain_trace();
            if records.is_empty() {
                return Ok(JsText("[]".into()));
            }
            // Content attributes keep exact JS text: JsText decodes the escapes.
            serde_json::to_string(&records)
                .map(JsText)
                .map_err(|e| napi::Error::from_reason(e.to_string()))
        })
    })
}

#[napi]
pub fn open_root(domain: u32) -> Result<()> {
    guard(|| {
        registry::with(domain, |d| {
            d.open_root();
            Ok(())
        })
    })
}

#[napi]
pub fn close_root(domain: u32, error_type: Option<String>, message: Option<String>) -> Result<()> {
    guard(|| {
        registry::with(domain, |d| {
            let failure = error_type.map(|error_type| SpanFailure {
                error_type,
                message: message.unwrap_or_default(),
            });
            d.close_root(failure);
            Ok(())
        })
    })
}

#[napi]
pub fn set_structured(domain: u32, task: u32) -> Result<()> {
    guard(|| registry::with(domain, |d| d.set_structured(task).map_err(engine_error)))
}

/// Whether `task` is a live structured task (task ids are reused; see lib/core/domain.js).
#[napi]
pub fn is_structured(domain: u32, task: u32) -> Result<bool> {
    guard(|| registry::with(domain, |d| Ok(d.is_structured(task))))
}

#[napi]
pub fn invalid(domain: u32, task: u32, type_name: String) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.invalid(task, &type_name)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn unknown_element(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.unknown_element(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn fail(domain: u32, task: u32, error_type: String, message: String) -> Result<()> {
    guard(|| {
        registry::with(domain, |d| {
            d.fail(
                task,
                SpanFailure {
                    error_type,
                    message,
                },
            )
            .map_err(engine_error)
        })
    })
}

/// The message of the engine error that ended `task` (always an `EvaluationError`).
#[napi]
pub fn take_error(domain: u32, task: u32) -> Result<String> {
    guard(|| {
        registry::with(domain, |d| {
            d.take_error(task)
                .map(|e| e.to_string())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn live_tasks(domain: u32) -> Result<u32> {
    guard(|| registry::with(domain, |d| Ok(d.live_tasks() as u32)))
}

/// The primitive kinds in code order: `[kind, label]` pairs. The facade builds its marker
/// table from this, so the engine stays the single source of truth.
#[napi]
pub fn primitive_kinds() -> Result<Vec<Vec<String>>> {
    guard(|| {
        Ok({
            PRIMITIVES
                .iter()
                .map(|(kind, label)| vec![kind.to_string(), label.to_string()])
                .collect()
        })
    })
}

/// One batch of trace records for the record sinks (`aml_engine::TraceBatch`; decoded by
/// `lib/observability/trace-batch.js`): numbers in one array, strings by reference.
#[napi(object)]
pub struct TraceBatchJs {
    pub numbers: Float64Array,
    pub strings: Vec<String>,
    pub interned: u32,
}

/// Pending trace records as a record sinks' batch, `null` when there are none; `content`
/// adds the sensitive attributes.
#[napi]
pub fn drain_trace_batch(domain: u32, content: bool) -> Result<Option<TraceBatchJs>> {
    guard(|| {
        registry::with(domain, |d| {
            Ok(d.drain_trace_batch(content).map(|batch| TraceBatchJs {
                numbers: Float64Array::new(batch.numbers),
                strings: batch.strings,
                interned: batch.interned as u32,
            }))
        })
    })
}

/// The engine's trace clock now (milliseconds, sub-millisecond precision): the clock of the
/// records' `at` field, so a batch consumer can calibrate it against its own clock once.
#[napi]
pub fn trace_clock() -> Result<f64> {
    guard(|| Ok(aml_engine::trace_clock_ms()))
}
