//! napi binding for `@aml-jsx/sdk`. Conversions only: every method forwards to the napi-free
//! engine in `crates/aml-engine` and turns its results into numbers, strings or JSON.

mod agent;
mod evaluation;
mod guard;
mod spans;

pub use evaluation::{panic_for_test, primitive_kinds, NativeEvaluation};
