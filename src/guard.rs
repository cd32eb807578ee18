//! Panics must never unwind into Node (that aborts the process). Every binding entry point
//! runs inside [`guard`], which turns a panic into an ordinary JS exception; the facade's
//! driver then rejects the evaluation promise with it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use napi::{Error, Result, Status};

static QUIET_HOOK: Once = Once::new();

/// The default hook prints a backtrace banner to stderr for every caught panic; the message
/// already reaches the user through the rejected promise, so keep stderr clean.
pub fn install_quiet_hook() {
    QUIET_HOOK.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

pub fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    install_quiet_hook();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(panic_error(payload)),
    }
}

/// The JS error for a caught panic payload (also used by the async process bridge).
pub fn panic_error(payload: Box<dyn std::any::Any + Send>) -> Error {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::new(
        Status::GenericFailure,
        format!("AML engine panicked: {detail}"),
    )
}

pub fn engine_error(err: aml_engine::EvalError) -> Error {
    Error::new(Status::GenericFailure, err.to_string())
}
