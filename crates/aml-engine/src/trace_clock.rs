//! The clocks of trace records: the monotonic trace clock (`at`, durations) and the wall
//! clock (`timestamp`).

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The process-wide origin of the trace clock: the first time anything asked for it.
static CLOCK_ORIGIN: OnceLock<Instant> = OnceLock::new();

/// Milliseconds of `instant` on the trace clock, a monotonic clock with sub-millisecond
/// precision. A record's `timestamp` is whole `Date.now()` milliseconds (the public event
/// field); `at` lets an exporter that receives records in batches place them exactly: it
/// calibrates once against its own clock with [`trace_clock_ms`].
pub(crate) fn clock_ms(instant: Instant) -> f64 {
    let origin = *CLOCK_ORIGIN.get_or_init(Instant::now);
    instant.saturating_duration_since(origin).as_secs_f64() * 1000.0
}

/// The trace clock now (see [`clock_ms`]).
pub fn trace_clock_ms() -> f64 {
    clock_ms(Instant::now())
}

pub(crate) fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

/// Fixes the trace clock's origin now if nothing did yet: it then predates every instant a
/// tracer takes.
pub(crate) fn start_clock() {
    CLOCK_ORIGIN.get_or_init(Instant::now);
}
