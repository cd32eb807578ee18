//! The step calls the driver makes for every evaluated value and every Agent, as plain
//! Node-API callbacks (see `src/hot_path/raw_call.rs` for why). `lib/core/native.js` takes them from
//! [`hot_path`] once; they keep the argument order and results of the `#[napi]` functions
//! they replace, and every one runs inside `guard` (a panic becomes a thrown JS error).

use aml_engine::{AgentEntry, AgentPlan, NodeKind, SpanFailure, SpanKind, TextAgentStart};
use napi::bindgen_prelude::ToNapiValue;
use napi::sys::{self, napi_callback_info, napi_env, napi_value};
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::evaluation::spans::{attrs, span_id};
use crate::hot_path::raw_call::{
    args, bool_arg, bool_value, f64_arg, f64_value, function_table, i32_arg, is_nullish,
    optional_string, raw_callback, read_string, respond, string_array, string_value, u32_arg,
    u32_value, undefined, with_strings, Callback,
};
use crate::hot_path::recorded_steps;
use crate::hot_path::tool_span::{close_tool_span, open_tool_span, push_span_id};

fn kind_of(code: i32) -> NodeKind {
    if code < 0 {
        NodeKind::Component
    } else {
        NodeKind::Primitive(code as u8)
    }
}

/// A JS number below 2^53 (lib/core/domain.js numbers objects; see `aml_engine::Identity`).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn identity_of(value: f64) -> u64 {
    value as u64
}

raw_callback!(new_task, |env, info| {
    let [domain, parent] = args::<2>(env, info)?;
    let domain = u32_arg(env, domain)?;
    let parent = if is_nullish(env, parent)? {
        None
    } else {
        Some(u32_arg(env, parent)?)
    };
    let id = registry::with(domain, |d| d.new_task(parent).map_err(engine_error))?;
    u32_value(env, id)
});

raw_callback!(text, |env, info| {
    let [domain, task, value] = args::<3>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let code = with_strings(|buffers| {
        read_string(env, value, &mut buffers[0])?;
        registry::with(domain, |d| d.text(task, &buffers[0]).map_err(engine_error))
    })?;
    u32_value(env, code.encode())
});

raw_callback!(empty, |env, info| {
    let [domain, task] = args::<2>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let code = registry::with(domain, |d| d.empty(task).map_err(engine_error))?;
    u32_value(env, code.encode())
});

raw_callback!(array, |env, info| {
    let [domain, task, identity, len] = args::<4>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let (identity, len) = (identity_of(f64_arg(env, identity)?), u32_arg(env, len)?);
    let code = registry::with(domain, |d| {
        d.array(task, identity, len).map_err(engine_error)
    })?;
    u32_value(env, code.encode())
});

// `kind` is -1 for a function component, else the primitive's code.
raw_callback!(node, |env, info| {
    let [domain, task, identity, kind, name] = args::<5>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let (identity, kind) = (
        identity_of(f64_arg(env, identity)?),
        kind_of(i32_arg(env, kind)?),
    );
    let code = with_strings(|buffers| {
        read_string(env, name, &mut buffers[0])?;
        registry::with(domain, |d| {
            d.node(task, identity, kind, &buffers[0])
                .map_err(engine_error)
        })
    })?;
    u32_value(env, code.encode())
});

raw_callback!(finish, |env, info| {
    let [domain, task] = args::<2>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let text = registry::with(domain, |d| d.finish(task).map_err(engine_error))?;
    string_value(env, &text)
});

raw_callback!(current_span, |env, info| {
    let [domain, task] = args::<2>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let span = registry::with(domain, |d| d.current_span(task).map_err(engine_error))?;
    string_value(env, &span.to_string())
});

raw_callback!(enter_agent, |env, info| {
    let [domain, task, has_provider, provider, model, system, sandboxed] = args::<7>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let entry = AgentEntry {
        has_provider: bool_arg(env, has_provider)?,
        provider: optional_string(env, provider)?,
        model: optional_string(env, model)?,
        system: optional_string(env, system)?,
        // Optional in the facade's signature (false when omitted).
        sandboxed: !is_nullish(env, sandboxed)? && bool_arg(env, sandboxed)?,
    };
    let code = registry::with(domain, |d| d.enter_agent(task, entry).map_err(engine_error))?;
    u32_value(env, code.encode())
});

/// What the facade reads of a ready plan: [spanId, parentSpanId, prompt, system, ...followUps].
fn plan_parts(plan: &AgentPlan) -> Vec<String> {
    let mut out = Vec::with_capacity(4 + plan.follow_ups().len());
    out.push(plan.span_id.to_string());
    out.push(plan.parent_span.to_string());
    out.push(plan.prompt().to_string());
    out.push(plan.system());
    out.extend(plan.follow_ups().iter().cloned());
    out
}

// The ready plan of the Agent on top (see `plan_parts`).
raw_callback!(agent_plan, |env, info| {
    let [domain, task] = args::<2>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let parts = registry::with(domain, |d| {
        Ok(plan_parts(d.agent_plan(task).map_err(engine_error)?))
    })?;
    string_array(env, &parts)
});

/// How a one-call Agent step ended: the ready plan's line, or the step it stopped at.
enum Started {
    Ready(String),
    Stopped(u32),
}

/// `spanId \n parentSpanId \n system` of a text-only Agent's plan: one string crosses, not
/// an array built element by element (the facade already holds the prompt, and a text-only
/// Agent has no follow-ups).
fn text_agent_line(plan: &AgentPlan) -> String {
    let mut line = String::new();
    push_text_agent_line(&mut line, plan);
    line
}

/// Appends [`text_agent_line`]'s text to `line` (the journaled path prefixes a status).
pub(crate) fn push_text_agent_line(line: &mut String, plan: &AgentPlan) {
    debug_assert!(plan.follow_ups().is_empty());
    let system = plan.system();
    line.reserve(48 + system.len());
    push_span_id(line, plan.span_id);
    line.push('\n');
    push_span_id(line, plan.parent_span);
    line.push('\n');
    line.push_str(&system);
}

// `evaluate(<Agent>prompt</Agent>)` entered in one call (aml_engine::TextAgentStart): the
// plan's line when ready (see `text_agent_line`), else the step code the driver would have
// got.
raw_callback!(enter_text_agent, |env, info| {
    let [domain, task, identity, has_provider, provider, prompt] = args::<6>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let identity = identity_of(f64_arg(env, identity)?);
    let entry = AgentEntry {
        has_provider: bool_arg(env, has_provider)?,
        provider: optional_string(env, provider)?,
        ..AgentEntry::default()
    };
    let started = with_strings(|buffers| {
        read_string(env, prompt, &mut buffers[0])?;
        registry::with(domain, |d| {
            match d
                .enter_text_agent(task, identity, entry, &buffers[0])
                .map_err(engine_error)?
            {
                TextAgentStart::Ready(plan) => {
                    let line = text_agent_line(plan);
                    recorded_steps::begin(d, task)?;
                    Ok(Started::Ready(line))
                }
                TextAgentStart::Stopped(step) => Ok(Started::Stopped(step.encode())),
            }
        })
    })?;
    match started {
        Started::Ready(line) => string_value(env, &line),
        Started::Stopped(code) => u32_value(env, code),
    }
});

// The one-call Agent's result: the step code. `Done` means the task completed and was
// released; its output is the Agent's text, which the facade already holds.
raw_callback!(finish_text_agent, |env, info| {
    let [domain, task, text, output] = args::<4>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let finished = with_strings(|buffers| {
        let [text_buffer, output_buffer, _] = buffers;
        read_string(env, text, text_buffer)?;
        read_string(env, output, output_buffer)?;
        registry::with(domain, |d| {
            // Landed first, as journalRecordFinish does: nothing is recorded when the engine
            // cannot take the answer at all.
            let step = d
                .finish_text_agent(task, text_buffer, output_buffer)
                .map_err(engine_error)?;
            recorded_steps::record(d, task, text_buffer)?;
            Ok(step)
        })
    })?;
    let code = finished.encode();
    u32_value(env, code)
});

// True when `task` holds a provider slot now; false when it was queued.
raw_callback!(schedule_agent, |env, info| {
    let [domain, task] = args::<2>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let granted = registry::with(domain, |d| Ok(d.scheduler().request(task)))?;
    bool_value(env, granted)
});

// Releases a slot; returns the queued task that now holds it, or -1.
raw_callback!(release_agent_slot, |env, info| {
    let [domain] = args::<1>(env, info)?;
    let domain = u32_arg(env, domain)?;
    let next = registry::with(domain, |d| Ok(d.scheduler().release()))?;
    f64_value(env, next.map_or(-1.0, f64::from))
});

raw_callback!(agent_done, |env, info| {
    let [domain, task, text, output] = args::<4>(env, info)?;
    let (domain, task) = (u32_arg(env, domain)?, u32_arg(env, task)?);
    let code = with_strings(|buffers| {
        let [text_buffer, output_buffer, _] = buffers;
        read_string(env, text, text_buffer)?;
        read_string(env, output, output_buffer)?;
        registry::with(domain, |d| {
            d.agent_done(task, text_buffer, output_buffer)
                .map_err(engine_error)
        })
    })?;
    u32_value(env, code.encode())
});

/// Optional JSON attributes (`undefined`: none), decoded as `crate::evaluation::spans::attrs` does.
///
/// # Safety
/// `value` must be a live value of `env`.
unsafe fn optional_attributes(
    env: napi_env,
    value: napi_value,
) -> Result<aml_engine::trace::Attributes> {
    // SAFETY: the caller's contract.
    attrs(unsafe { optional_string(env, value) }?)
}

// Opens a driver-owned span (Tool calls, sessions…) and returns its id.
raw_callback!(open_span, |env, info| {
    let [domain, kind, name, parent, resource, attributes, sensitive] = args::<7>(env, info)?;
    let domain = u32_arg(env, domain)?;
    let kind = with_strings(|buffers| {
        read_string(env, kind, &mut buffers[0])?;
        SpanKind::parse(&buffers[0])
            .ok_or_else(|| Error::from_reason(format!("invalid AML span kind {:?}", buffers[0])))
    })?;
    let mut name_text = String::new();
    read_string(env, name, &mut name_text)?;
    let parent = optional_string(env, parent)?
        .as_deref()
        .map(span_id)
        .transpose()?;
    let resource = bool_arg(env, resource)?;
    let (attributes, sensitive) = (
        optional_attributes(env, attributes)?,
        optional_attributes(env, sensitive)?,
    );
    let id = registry::with(domain, |d| {
        Ok(d.open_span(kind, name_text, parent, resource, attributes, sensitive))
    })?;
    string_value(env, &id.to_string())
});

// Closes a driver-owned span; with an error type it ends with status error.
raw_callback!(close_span, |env, info| {
    let [domain, id, error_type, message, attributes, sensitive] = args::<6>(env, info)?;
    let domain = u32_arg(env, domain)?;
    let id = with_strings(|buffers| {
        read_string(env, id, &mut buffers[0])?;
        span_id(&buffers[0])
    })?;
    let failure = optional_string(env, error_type)?.map(|error_type| SpanFailure {
        error_type,
        message: String::new(),
    });
    let failure = match failure {
        Some(mut failure) => {
            failure.message = optional_string(env, message)?.unwrap_or_default();
            Some(failure)
        }
        None => None,
    };
    let (attributes, sensitive) = (
        optional_attributes(env, attributes)?,
        optional_attributes(env, sensitive)?,
    );
    registry::with(domain, |d| {
        d.close_span(id, failure, attributes, sensitive)
            .map_err(engine_error)
    })?;
    undefined(env)
});

const CALLBACKS: &[(&str, Callback)] = &[
    ("agentDone", agent_done),
    ("agentPlan", agent_plan),
    ("array", array),
    ("closeSpan", close_span),
    ("closeToolSpan", close_tool_span),
    ("currentSpan", current_span),
    ("empty", empty),
    ("enterAgent", enter_agent),
    ("enterTextAgent", enter_text_agent),
    ("finish", finish),
    ("finishTextAgent", finish_text_agent),
    ("newTask", new_task),
    ("node", node),
    ("openSpan", open_span),
    ("openToolSpan", open_tool_span),
    ("releaseAgentSlot", release_agent_slot),
    ("scheduleAgent", schedule_agent),
    ("text", text),
];

/// The plain value a raw table is handed back as.
pub struct RawValue(napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<napi_value> {
        Ok(value.0)
    }
}

/// The hot-path step functions, by their facade names (called once by `lib/core/native.js`).
#[napi(ts_return_type = "Record<string, (...args: any[]) => any>")]
pub fn hot_path(env: Env) -> Result<RawValue> {
    // SAFETY: `env` is the env of this call; the table's functions are plain callbacks.
    guard(|| unsafe { function_table(env.raw(), CALLBACKS) }.map(RawValue))
}
