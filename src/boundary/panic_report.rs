//! What a caught panic says. The hook keeps the diagnostics a bare `catch_unwind` loses: it
//! records the message and source location for the `catch_unwind` that follows on the same
//! thread, emits one `tracing` error event (target [`PANIC_TARGET`]) for whoever installed a
//! subscriber, and then calls the hook that was installed before it (Rust's default prints
//! the panic to stderr once; another library's hook keeps working). The text also reaches
//! the user through the rejected promise. napi-free, so `cargo test` covers it
//! (`src/boundary/guard.rs` wraps the text in a JS error).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::PanicHookInfo;
use std::sync::Once;

/// The `tracing` target of the panic event.
pub const PANIC_TARGET: &str = "aml_jsx_sdk::panic";

static HOOK: Once = Once::new();

/// A panic as the hook saw it.
struct Report {
    message: String,
    location: Option<String>,
}

thread_local! {
    // The hook runs on the panicking thread before unwinding starts, and every
    // `catch_unwind` of this crate catches on that same thread (the process runtime polls
    // futures under `catch_unwind` on the worker that panicked), so a thread-local hands the
    // report over without locking.
    static LAST: RefCell<Option<Report>> = const { RefCell::new(None) };
    // Set while a test hook panics on purpose: the report is still recorded (the suite checks
    // its text), but the previous hook's stderr print — a backtrace under RUST_BACKTRACE=1 —
    // would make a green run look broken.
    static EXPECTED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, whose panics on this thread are expected: recorded, not printed.
#[cfg(any(test, feature = "test-hooks"))]
pub fn expecting_panic<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = EXPECTED.try_with(|flag| flag.set(false));
        }
    }
    EXPECTED.with(|flag| flag.set(true));
    let _reset = Reset;
    f()
}

/// Installs the recording hook once per process (idempotent; cheap after the first call),
/// chained in front of whatever hook was installed before.
pub fn install_hook() {
    HOOK.call_once(|| std::panic::set_hook(chained(std::panic::take_hook())));
}

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

/// The recording hook in front of `previous`.
fn chained(previous: Hook) -> Hook {
    Box::new(move |info| {
        record(info);
        if !EXPECTED.try_with(Cell::get).unwrap_or(false) {
            previous(info);
        }
    })
}

fn record(info: &PanicHookInfo<'_>) {
    let message = payload_message(info.payload());
    let location = info
        .location()
        .map(|at| format!("{}:{}:{}", at.file(), at.line(), at.column()));
    tracing::error!(
        target: PANIC_TARGET,
        panic_message = message.as_str(),
        location = location.as_deref().unwrap_or("unknown"),
        "AML engine panicked"
    );
    // `try_with`: a panic during thread teardown has no slot left; the message still
    // reaches JS from the payload.
    let _ = LAST.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(Report { message, location });
        }
    });
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// `AML engine panicked: <message> (at <file>:<line>:<column>)` for a payload just caught on
/// this thread; without the location when the hook did not see this panic.
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    let message = payload_message(payload);
    let report = LAST
        .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut slot| slot.take()))
        .ok()
        .flatten();
    // The report belongs to this payload only if the messages agree: a payload re-raised
    // with `resume_unwind` (no hook call) must not borrow a stale location.
    match report {
        Some(Report {
            message: seen,
            location: Some(location),
        }) if seen == message => format!("AML engine panicked: {message} (at {location})"),
        _ => format!("AML engine panicked: {message}"),
    }
}

#[cfg(test)]
#[path = "panic_report_tests.rs"]
mod tests;
