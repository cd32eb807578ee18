//! The boundary itself: panic guard and report, the live-domain registry, lossless JS text,
//! the addon's tokio runtime and the test-only entry points.

pub(crate) mod async_runtime;
pub(crate) mod exact_text;
pub(crate) mod guard;
pub(crate) mod handles;
pub(crate) mod local_slots;
pub(crate) mod panic_report;
pub(crate) mod registry;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
