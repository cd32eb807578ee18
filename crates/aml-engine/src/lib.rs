//! The AML evaluation engine.
//!
//! This crate knows nothing about Node.js. It holds the semantic state of an evaluation
//! (frames, depth, cycle tracking, text accumulation, limits, trace identities) as a sans-IO
//! state machine. A driver — the JS facade through the napi binding, or a Rust test — feeds it
//! *classified values* and receives the next [`Step`] to perform. Anything that needs a JS
//! object (invoking a component, reading an array element, awaiting a thenable) is done by the
//! driver; the machine only ever sees integer identities and plain data.

mod domain;
mod error;
mod frame;
mod limits;
mod span_id;
mod step;
mod task;
pub mod trace;

pub use domain::{Domain, TaskId};
pub use error::EvalError;
pub use limits::Limits;
pub use span_id::SpanId;
pub use step::{Op, Step};
pub use task::NodeKind;
pub use trace::{AttrValue, SpanFailure, SpanKind, SpanStatus, TraceRecord};
