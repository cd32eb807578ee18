//! The panic hook's two outputs: the JS error text and the `tracing` event.

use std::sync::{Arc, Mutex};

use std::panic::catch_unwind;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use super::{chained, expecting_panic, install_hook, panic_text, PANIC_TARGET};

/// One recorded event: target, level and `(field, value)` pairs.
type Recorded = (String, tracing::Level, Vec<(String, String)>);

/// Records every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Recorded>>>);

struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_string(), value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .push((field.name().to_string(), format!("{value:?}")));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        let meta = event.metadata();
        self.0
            .lock()
            .unwrap()
            .push((meta.target().to_string(), *meta.level(), fields.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Serializes the tests of this module. The hook's `tracing::error!` is one callsite, and
/// `tracing` caches each callsite's interest: a test on a thread without a subscriber hitting
/// it while another test's scoped subscriber is being registered could leave the cached
/// interest at "never", and the event would not reach the capture (seen once, flaky).
static SERIAL: Mutex<()> = Mutex::new(());

/// What `guard` does, minus the napi error around the text.
fn caught(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    install_hook();
    panic_text(&*catch_unwind(f).unwrap_err())
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

#[test]
fn a_panic_keeps_its_message_and_location_in_the_error_and_in_one_tracing_event() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let capture = Capture::default();
    let line = line!() + 2;
    let text = tracing::subscriber::with_default(capture.clone(), || {
        caught(|| panic!("broken invariant {}", 7))
    });
    let location = format!("src/boundary/panic_report_tests.rs:{line}:");
    assert!(
        text.starts_with(&format!(
            "AML engine panicked: broken invariant 7 (at {location}"
        )),
        "{text}"
    );
    let events = capture.0.lock().unwrap();
    assert_eq!(events.len(), 1);
    let (target, level, fields) = &events[0];
    assert_eq!(target, PANIC_TARGET);
    assert_eq!(*level, tracing::Level::ERROR);
    assert_eq!(field(fields, "message"), Some("AML engine panicked"));
    assert_eq!(field(fields, "panic_message"), Some("broken invariant 7"));
    assert!(field(fields, "location").unwrap().starts_with(&location));
}

#[test]
fn the_hook_installed_before_still_runs_once_after_the_report() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let saved = std::panic::take_hook();
    std::panic::set_hook(chained(Box::new(|_| {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    })));
    let payload = catch_unwind(|| panic!("chained")).unwrap_err();
    let text = panic_text(&*payload);
    std::panic::set_hook(saved);
    assert_eq!(CALLS.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        text.starts_with("AML engine panicked: chained (at src/boundary/panic_report_tests.rs:"),
        "{text}"
    );
}

#[test]
fn a_payload_raised_without_the_hook_does_not_borrow_a_stale_location() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // A panic nobody turned into text leaves its report behind; a different payload
    // re-raised with `resume_unwind` (no hook call) must not take that location.
    install_hook();
    let _ = catch_unwind(|| panic!("unconsumed"));
    let text = caught(|| std::panic::resume_unwind(Box::new("re-raised")));
    assert_eq!(text, "AML engine panicked: re-raised");
}

#[test]
fn an_expected_panic_is_recorded_but_not_passed_to_the_hook_before() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let saved = std::panic::take_hook();
    std::panic::set_hook(chained(Box::new(|_| {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    })));
    let payload = catch_unwind(|| expecting_panic(|| panic!("on purpose"))).unwrap_err();
    let text = panic_text(&*payload);
    // The flag ends with the call: the next panic reaches the previous hook again.
    let _ = catch_unwind(|| panic!("unexpected"));
    std::panic::set_hook(saved);
    assert_eq!(CALLS.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        text.starts_with("AML engine panicked: on purpose (at src/boundary/panic_report_tests.rs:"),
        "{text}"
    );
}
