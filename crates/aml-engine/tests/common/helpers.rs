//! Small shorthands shared by several test binaries.

use aml_engine::{EvalError, Limits, Policy, SpanId};

use super::driver::Failure;

pub fn limits() -> Limits {
    Limits::default()
}

pub fn engine(e: EvalError) -> Result<String, Failure> {
    Err(Failure::Engine(e))
}

pub fn with_system(system: &str) -> Policy {
    Policy {
        system: system.into(),
        ..Policy::default()
    }
}

pub fn span(n: u64) -> SpanId {
    SpanId::Span(n)
}
