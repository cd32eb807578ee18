//! The evaluator's per-value, per-Agent, per-Tool and per-journal-entry step calls as plain
//! Node-API callbacks (docs/HOT-PATH-PERFORMANCE.md), and the toolkit they are built on.

pub mod callbacks;
pub mod journal;
pub(crate) mod raw_call;
pub mod recorded_steps;
pub(crate) mod tool_span;
