//! The AML evaluation engine.
//!
//! This crate knows nothing about Node.js. It holds the semantic state of an evaluation
//! (frames, depth, cycle tracking, text channels, Agent plans, limits, the Agent scheduler,
//! trace identities) as a sans-IO state machine. A driver — the JS facade through the napi
//! binding, or a Rust test — feeds it *classified values* and receives the next [`Step`] to
//! perform. Anything that needs a JS object (invoking a component, reading an array element,
//! awaiting a thenable, calling a provider) is done by the driver; the machine only ever sees
//! integer identities and plain data.

mod agent;
mod agent_completion;
mod capture;
mod domain;
mod domain_primitives;
mod error;
mod external_spans;
mod frame;
mod identity;
// JS text rules live in the shared aml-text crate; the alias keeps `crate::js_text::…` paths.
use aml_text as js_text;
mod journal_tables;
mod json_schema;
mod limits;
mod loop_render;
mod parked;
mod position;
mod primitive;
mod scheduler;
mod scope;
mod shared;
mod skill;
mod span_id;
mod step;
mod task;
mod text_agent;
pub mod trace;
mod trace_batch;
mod trace_clock;
mod trace_compact;
mod trace_json;
mod usage;
mod workspace;

pub use agent::AgentEntry;
pub use capture::{AgentPlan, McpGrant, McpKind, SkillGrant, ToolGrant};
pub use domain::{Domain, Policy, TaskId};
pub use error::EvalError;
pub use identity::Identity;
pub use journal_tables::{journal_point_attributes, JournalStep, SparePositions};
pub use js_text::js_trim;
pub use json_schema::json_schema_problem;
pub use limits::Limits;
pub use loop_render::STATE_TOOL;
pub use primitive::{Primitive, PRIMITIVES};
pub use scheduler::Scheduler;
pub use scope::ScopeEntry;
pub use span_id::SpanId;
pub use step::{Op, Step, TRACE_PENDING};
pub use task::NodeKind;
pub use text_agent::TextAgentStart;
pub use trace::{
    trace_clock_ms, AttrValue, SpanFailure, SpanKind, SpanStatus, TraceRecord, TraceTap,
};
pub use trace_batch::{TraceBatch, TraceStrings};
pub use trace_compact::CompactField;
pub use trace_json::attributes_from_json;
pub use usage::{acp_usage, BadUsage, Reported, Usage, USAGE_FIELDS};
pub use workspace::Channel;
