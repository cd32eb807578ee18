//! Panics must never unwind into Node (that aborts the process). Every binding entry point
//! runs inside [`guard`], which turns a panic into an ordinary JS exception; the facade's
//! driver then rejects the evaluation promise with it. The text keeps the panic's message
//! and location (`src/boundary/panic_report.rs`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::{Error, Result, Status};

use crate::boundary::panic_report::{install_hook, panic_text};

/// Installs the panic hook: it records the diagnostics for the JS error, then runs the hook
/// installed before it (by default Rust's, which prints the panic to stderr once).
pub fn install_panic_hook() {
    install_hook();
}

pub fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    install_panic_hook();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(panic_error(payload)),
    }
}

/// The JS error for a caught panic payload (also used by the async process bridge).
pub fn panic_error(payload: Box<dyn std::any::Any + Send>) -> Error {
    Error::new(Status::GenericFailure, panic_text(&*payload))
}

pub fn engine_error(err: aml_engine::EvalError) -> Error {
    Error::new(Status::GenericFailure, err.to_string())
}
